/**
 * The test runner behind `deno task test` (after the peers are ensured). The tests that use the
 * local Kubernetes cluster hold one machine-wide lock each, so run in parallel with the rest they
 * would sit in the parallel slots waiting for each other and stall every other file; the two-data-
 * plane multi-cluster tests (`mcs_`) each run many processes and time failovers; the SPIRE
 * registrar files (`spire_registrar`) crash the process beside another gRPC-using file (Deno's
 * nghttp2 abort on a GOAWAY, see {@link maxWholeReruns}: 4 of 8 runs beside the etcd registry file,
 * 0 of 7 alone or one after another, 2026-12-07 — and once more in the serial group itself, beside
 * the parallel one, the same day). They run instead one after another, type-checked together once
 * and then each in a `deno test` of its own (a crash ends only its file, which is then named and
 * run again alone), beside a `deno test --parallel` of everything else; each line of output carries
 * its group's prefix.
 *
 * A file that failed is run once more, alone, after both groups (at most `maxReruns` files): a
 * test that fails only beside 600 others on two busy cores is told apart from one that fails on
 * its own. The run passes only when every such file passes alone; every first failure is repeated
 * at the very end of the output either way, marked with how its file did alone, so a test that is
 * flaky under load stays in sight. (Not named `test.ts`: `deno test` would take that name.)
 *
 *   deno run -A scripts/run_tests.ts            # both groups
 *   deno run -A scripts/run_tests.ts <files…>   # just those files, as `deno test -A --parallel`
 * @module
 */
import { digest, failedFiles, failures } from "./failure_digest.ts";

/**
 * Test files of the serial group, by name prefix in e2e/, run in this order: the SPIRE registrar
 * files, the multi-cluster data planes, the cluster files, then the official conformance gate
 * (`conformance_test.ts`).
 */
const serialPrefixes = ["spire_registrar", "mcs_", "cluster_", "conformance"];
/** More failed files than this is no flake: the run fails without running any again. */
const maxReruns = 4;

const root = new URL("..", import.meta.url).pathname;

async function serialFiles(): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(`${root}e2e`)) {
    const n = e.name;
    if (e.isFile && n.endsWith("_test.ts") && serialPrefixes.some((p) => n.startsWith(p))) {
      out.push(n);
    }
  }
  const group = (n: string) => serialPrefixes.findIndex((p) => n.startsWith(p));
  return out.sort((a, b) => group(a) - group(b) || a.localeCompare(b)).map((n) => `e2e/${n}`);
}

/**
 * deno.json's `test.exclude`: an `--ignore` flag replaces it, so the flag must repeat it (or the
 * run would pick up the test files of cached npm packages).
 */
async function configExcludes(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`));
  return config.test?.exclude ?? [];
}

const serialIgnores = serialPrefixes.map((p) => `e2e/${p}*`); // e2e/cluster_test.ts too

/** Copies `stream` to `to` line by line with `prefix`; resolves to everything it carried. */
async function pump(
  stream: ReadableStream<Uint8Array>,
  prefix: string,
  to: typeof Deno.stdout,
): Promise<string> {
  const enc = new TextEncoder();
  const seen: string[] = [];
  let partial = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    seen.push(text);
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    if (lines.length > 0) await to.write(enc.encode(lines.map((l) => `${prefix}${l}\n`).join("")));
  }
  if (partial) await to.write(enc.encode(`${prefix}${partial}\n`));
  return seen.join("");
}

interface Lane {
  readonly code: number;
  readonly output: string;
  /** The signal that ended the run: the process crashed (e.g. SIGABRT from a native assertion). */
  readonly signal: Deno.Signal | null;
  /** What it ran: a group that crashed is run again whole. */
  readonly args: readonly string[];
}

async function run(prefix: string, args: string[], command = "test"): Promise<Lane> {
  const child = new Deno.Command(Deno.execPath(), {
    args: command === "test" ? ["test", "-A", ...args] : [command, ...args],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const [status, out, err] = await Promise.all([
    child.status,
    pump(child.stdout, prefix, Deno.stdout),
    pump(child.stderr, prefix, Deno.stderr),
  ]);
  return { code: status.code, output: `${out}\n${err}`, signal: status.signal, args };
}

/**
 * How many times a crashed group runs again whole. Deno's own nghttp2 aborts the process on some
 * GOAWAYs (`find_stream_on_goaway_func`, denoland/deno#36788, open for Deno 2.9.6): no test can
 * catch it, and it struck about one fresh-clone run in two, in a different file each time.
 */
const maxWholeReruns = 2;

/**
 * The parallel group crashed (its process ended by a signal, naming no failed test): it runs
 * again whole, again after another crash (up to {@link maxWholeReruns} times); a rerun that ends
 * normally but names failed tests has those files run alone, as any failed lane's. True when that ends in a
 * pass. Each crash's last lines are kept in the notes.
 */
async function rerunCrashed(name: string, lane: Lane): Promise<{ ok: boolean; notes: string[] }> {
  const notes: string[] = [];
  for (let crashed = lane, attempt = 1;; attempt++) {
    const last = crashed.output.trimEnd().split("\n").slice(-4).map((l) => `    ${l}`);
    notes.push(`[${name}] the group crashed (${crashed.signal}); its last lines:`, ...last);
    console.log(`\n[rerun] the ${name} group crashed (${crashed.signal}); running it again whole`);
    const again = await run("[rerun] ", [...lane.args]);
    if (again.code === 0) {
      notes.push(`[${name}] run again whole (${attempt}): passed`);
      return { ok: true, notes };
    }
    // A crash leaves files unrun, even one after some named failures: only a whole run tells.
    const crashedAgain = again.signal !== null;
    if (crashedAgain && attempt < maxWholeReruns) {
      crashed = again;
      continue;
    }
    if (crashedAgain) {
      notes.push(`[${name}] crashed again in each of ${attempt} whole runs: FAILED`);
      return { ok: false, notes };
    }
    notes.push(`[${name}] run again whole (${attempt}): failed tests, run alone below`);
    const alone = await rerunFailed(name, again);
    return { ok: alone.ok, notes: [...notes, ...alone.notes] };
  }
}

/**
 * A failed lane's files run again one at a time; true when each passed alone. A lane that
 * failed without naming a failure (a type error) or with too many is not run again; one that
 * crashed runs again whole when `wholeAgain` (the parallel group). `crashed` are files of the lane
 * whose own process crashed (the serial group's): they are run again alone like failed ones.
 */
async function rerunFailed(
  name: string,
  lane: Lane,
  wholeAgain = false,
  crashed: readonly string[] = [],
): Promise<{ ok: boolean; notes: string[] }> {
  if (lane.code === 0) return { ok: true, notes: [] };
  const list = failures(lane.output);
  const files = [...new Set([...failedFiles(list), ...crashed])];
  if (files.length === 0 && lane.signal !== null && wholeAgain) return rerunCrashed(name, lane);
  const notes = [`[${name}] failed tests (${list.length}):`, ...digest(list)];
  for (const file of crashed) notes.push(`[${name}] ${file}: its process crashed`);
  if (files.length === 0 || files.length > maxReruns) {
    notes.push(`[${name}] ${files.length} failed files: not run again`);
    return { ok: false, notes };
  }
  let ok = true;
  for (const file of files) {
    console.log(`\n[rerun] ${file} failed in the ${name} group; running it again alone`);
    const alone = await run("[rerun] ", [file]);
    ok &&= alone.code === 0;
    notes.push(
      `[${name}] ${file}: ${alone.code === 0 ? "passed alone (flaky under load)" : "FAILED alone"}`,
    );
    if (alone.code !== 0) notes.push(...digest(failures(alone.output)));
  }
  return { ok, notes };
}

/**
 * The serial files, in order: type-checked together in one `deno check`, then each in a
 * `deno test --no-check` of its own, so a crash (Deno's nghttp2 abort) ends only that file. One
 * lane for them all; `crashed` names the files whose process was ended by a signal. A failed check
 * runs none of them.
 */
async function runSerial(
  prefix: string,
  files: string[],
): Promise<{ lane: Lane; crashed: string[] }> {
  if (files.length === 0) {
    return { lane: { code: 0, output: "", signal: null, args: [] }, crashed: [] };
  }
  const check = await run(prefix, files, "check");
  if (check.code !== 0) return { lane: check, crashed: [] };
  const outputs: string[] = [];
  const crashed: string[] = [];
  let code = 0;
  for (const file of files) {
    const lane = await run(prefix, ["--no-check", file]);
    outputs.push(lane.output);
    if (lane.code !== 0) code = lane.code;
    if (lane.signal !== null) {
      code ||= 1;
      crashed.push(file);
    }
  }
  return { lane: { code, output: outputs.join("\n"), signal: null, args: files }, crashed };
}

if (Deno.args.length > 0) {
  Deno.exit((await run("", ["--parallel", ...Deno.args])).code);
}

const serial = await serialFiles();
const started = Date.now();
const [rest, { lane: cluster, crashed }] = await Promise.all([
  run("[tests] ", [
    "--parallel",
    `--ignore=${[...await configExcludes(), ...serialIgnores].join(",")}`,
  ]),
  runSerial("[cluster] ", serial),
]);
const reruns = [
  await rerunFailed("tests", rest, true),
  await rerunFailed("cluster", cluster, false, crashed),
];
const secs = Math.round((Date.now() - started) / 1000);
const word = (lane: Lane, ok: boolean) =>
  lane.code === 0 ? "ok" : ok ? "ok (passed when run again; see above)" : "FAILED";
const notes = reruns.flatMap((r) => r.notes);
if (notes.length > 0) console.log(`\n${notes.join("\n")}`);
console.log(
  `\ntests: ${word(rest, reruns[0].ok)}; serial tests (${serial.length} files, one at a time): ${
    word(cluster, reruns[1].ok)
  }; ${Math.floor(secs / 60)} min ${secs % 60} s`,
);
Deno.exit(reruns.every((r) => r.ok) ? 0 : 1);
