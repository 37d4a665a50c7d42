/**
 * The test runner behind `deno task test` (after the peers are ensured). The tests that use the
 * local Kubernetes cluster hold one machine-wide lock each, so run in parallel with the rest they
 * would sit in the parallel slots waiting for each other and stall every other file. They run
 * instead one after another in a `deno test` of their own, beside a `deno test --parallel` of
 * everything else; each line of output carries its group's prefix. The exit code is non-zero when
 * either group fails. (Not named `test.ts`: `deno test` would take that name for a test module.)
 *
 *   deno run -A scripts/run_tests.ts            # both groups
 *   deno run -A scripts/run_tests.ts <files…>   # just those files, as `deno test -A --parallel`
 * @module
 */
/**
 * Test files that use the local cluster (they take its lock): by name, in e2e/. The official
 * conformance gate (`conformance_test.ts`) sorts last, after every cluster_ file.
 */
const clusterPrefixes = ["cluster_", "conformance"];

const root = new URL("..", import.meta.url).pathname;

async function clusterFiles(): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(`${root}e2e`)) {
    const n = e.name;
    if (e.isFile && n.endsWith("_test.ts") && clusterPrefixes.some((p) => n.startsWith(p))) {
      out.push(`e2e/${n}`);
    }
  }
  return out.sort();
}

/**
 * deno.json's `test.exclude`: an `--ignore` flag replaces it, so the flag must repeat it (or the
 * run would pick up the test files of cached npm packages).
 */
async function configExcludes(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`));
  return config.test?.exclude ?? [];
}

const clusterIgnores = clusterPrefixes.map((p) => `e2e/${p}*`); // e2e/cluster_test.ts too

async function pump(stream: ReadableStream<Uint8Array>, prefix: string, to: typeof Deno.stdout) {
  const enc = new TextEncoder();
  let partial = "";
  for await (const text of stream.pipeThrough(new TextDecoderStream())) {
    const lines = (partial + text).split("\n");
    partial = lines.pop() ?? "";
    if (lines.length > 0) await to.write(enc.encode(lines.map((l) => `${prefix}${l}\n`).join("")));
  }
  if (partial) await to.write(enc.encode(`${prefix}${partial}\n`));
}

async function run(prefix: string, args: string[]): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", ...args],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const [status] = await Promise.all([
    child.status,
    pump(child.stdout, prefix, Deno.stdout),
    pump(child.stderr, prefix, Deno.stderr),
  ]);
  return status.code;
}

if (Deno.args.length > 0) {
  Deno.exit(await run("", ["--parallel", ...Deno.args]));
}

const cluster = await clusterFiles();
const started = Date.now();
const [rest, serial] = await Promise.all([
  run("[tests] ", [
    "--parallel",
    `--ignore=${[...await configExcludes(), ...clusterIgnores].join(",")}`,
  ]),
  cluster.length > 0 ? run("[cluster] ", cluster) : Promise.resolve(0),
]);
const secs = Math.round((Date.now() - started) / 1000);
console.log(
  `\ntests: ${
    rest === 0 ? "ok" : "FAILED"
  }; cluster tests (${cluster.length} files, one at a time): ${serial === 0 ? "ok" : "FAILED"}; ${
    Math.floor(secs / 60)
  } min ${secs % 60} s`,
);
Deno.exit(rest === 0 && serial === 0 ? 0 : 1);
