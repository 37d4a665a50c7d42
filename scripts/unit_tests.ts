/**
 * `deno task test:unit`: the tests that need no peer (no Envoy, etcd, kube-apiserver, SPIRE,
 * `ip`/netns, dig …), in one `deno test --parallel`. The set is the test files under
 * {@link UNIT_ROOTS} except {@link PEER_TESTS} and {@link SLOW_TESTS}; unit_tests_test.ts keeps it
 * exact: no unit test's import graph reaches a module that ensures a peer, every file in
 * PEER_TESTS does, and no file in SLOW_TESTS does (`deno task test` runs them all).
 *
 *   deno run -A scripts/unit_tests.ts            # run them
 *   deno run -A scripts/unit_tests.ts --list     # print the files
 * @module
 */
import { dirname, join, relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The project root. */
const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Folders (from the project root) whose test files are unit tests, bar {@link PEER_TESTS}. */
export const UNIT_ROOTS: readonly string[] = [
  "lib",
  "cni",
  "agent",
  "controller",
  "testbed",
  "bench",
  "scripts",
];

/** Test files under {@link UNIT_ROOTS} that ensure a peer (themselves or through a harness). */
export const PEER_TESTS: readonly string[] = [
  "agent/bootstrap/mod_test.ts",
  "agent/capture/adopt_netns_test.ts",
  "agent/capture/cni_invocation_test.ts",
  "agent/capture/nft_real_test.ts",
  "agent/capture/sink_netns_test.ts",
  "agent/dns/batched_test.ts",
  "agent/dns/clusterset_dig_test.ts",
  "agent/dns/dig_test.ts",
  "agent/dns/fuzz_test.ts",
  "agent/dns/hostile_test.ts",
  "agent/dns/loopback_upstream_test.ts",
  "agent/dns/netns_test.ts",
  "agent/dns/relay_test.ts",
  "agent/edge/start_test.ts",
  "agent/identity/spire_reconnect_test.ts",
  "agent/identity/spire_test.ts",
  "agent/node/capabilities_test.ts",
  "agent/node/envoy_capture_identity_test.ts",
  "agent/node/envoy_capture_test.ts",
  "agent/node/envoy_cold_routes_test.ts",
  "agent/node/envoy_node_test.ts",
  "agent/node/restart_resync_test.ts",
  "agent/node/run_test.ts",
  "agent/xds/server/deferred_stats_test.ts",
  "agent/xds/server/edits_test.ts",
  "agent/xds/server/eds_after_cds_test.ts",
  "agent/xds/server/envoy_test.ts",
  "agent/xds/server/nack_test.ts",
  "agent/xds/server/ondemand_test.ts",
  "agent/xds/server/protocol_test.ts",
  "agent/xds/server/vhds_test.ts",
  "agent/xds/translate/envoy_traffic_test.ts",
  "agent/xds/translate/envoy_validate_test.ts",
  "agent/xds/translate/node/envoy_validate_node_test.ts",
  "controller/controller_test.ts",
  "controller/edge_test.ts",
  "controller/webhook/pod_webhook_kube_test.ts",
  "controller/webhook/x509_test.ts",
  "lib/gatewayapi/admission/crd/vendored_test.ts",
  "lib/kube/source_scope_test.ts",
  "lib/kube/source_test.ts",
  "scripts/second_cluster_test.ts",
  "testbed/cluster/aether_image_test.ts",
  "testbed/cluster/config_test.ts",
  "testbed/cluster/metallb_test.ts",
  "testbed/conformance/channel_test.ts",
  "testbed/conformance/suite_test.ts",
  "testbed/peers/go_test.ts",
];

/**
 * Tests that need no peer but are too slow for a fast run: the CEL differential test alone
 * (≈ 25 s of CPU) costs as much as half the rest together.
 */
export const SLOW_TESTS: readonly string[] = [
  "lib/gatewayapi/admission/cel/differential_test.ts",
];

/** Folders never searched for tests. */
const SKIPPED: readonly string[] = [".cache", "node_modules", "testdata"];

function testFilesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(join(root, dir))) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory && !SKIPPED.includes(e.name)) out.push(...testFilesUnder(path));
    else if (e.isFile && e.name.endsWith("_test.ts")) out.push(path);
  }
  return out;
}

/** Every test file under {@link UNIT_ROOTS}, from the project root, sorted. */
export function rootTestFiles(): string[] {
  return UNIT_ROOTS.flatMap(testFilesUnder).sort();
}

/** The unit tests: {@link rootTestFiles} but {@link PEER_TESTS} and {@link SLOW_TESTS}. */
export function unitTestFiles(): string[] {
  const out = new Set([...PEER_TESTS, ...SLOW_TESTS]);
  return rootTestFiles().filter((f) => !out.has(f));
}

/** A call of `ensurePeer`, not its definition. */
const ENSURES = /(?<!function\s+)\bensurePeer\s*\(/;

interface GraphModule {
  specifier: string;
  local?: string;
  dependencies?: { code?: { specifier?: string } }[];
}

/**
 * For each of `files` (from the project root), how it reaches a module that calls `ensurePeer`
 * through the imports that run (`import type` does not): the chain of modules from the file to
 * it, or undefined when none does. The import graph is Deno's own (`deno info --json`: static
 * imports and dynamic ones of a literal specifier). A test that runs a peer found on `PATH`
 * without `ensurePeer` is not seen; none does today (the set passes with every peer command on
 * `PATH` a stub that fails, and an empty peer cache).
 */
export async function peerChains(
  files: readonly string[],
): Promise<Map<string, string[] | undefined>> {
  const dir = await Deno.makeTempDir({ prefix: "aether-unit-" });
  let graph: { modules: GraphModule[] };
  try {
    const entry = join(dir, "entry.ts");
    const url = (f: string) => pathToFileURL(join(root, f)).href;
    await Deno.writeTextFile(
      entry,
      files.map((f) => `import ${JSON.stringify(url(f))};\n`).join(""),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", join(root, "deno.json"), entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(`deno info failed: ${new TextDecoder().decode(out.stderr)}`);
    graph = JSON.parse(new TextDecoder().decode(out.stdout));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const modules = new Map(graph.modules.map((m) => [m.specifier, m]));
  const ensures = (m: GraphModule) =>
    m.local !== undefined && m.local.startsWith(root) &&
    ENSURES.test(Deno.readTextFileSync(m.local));
  const chainOf = (start: string): string[] | undefined => {
    // Breadth first: the shortest chain.
    const from = new Map<string, string | undefined>([[start, undefined]]);
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      const m = modules.get(queue[i]);
      if (!m) continue;
      if (ensures(m)) {
        const chain: string[] = [];
        for (let at: string | undefined = m.specifier; at; at = from.get(at)) {
          chain.unshift(relative(root, fileURLToPath(at)));
        }
        return chain;
      }
      for (const d of m.dependencies ?? []) {
        const next = d.code?.specifier;
        if (next?.startsWith("file:") && !from.has(next)) {
          from.set(next, m.specifier);
          queue.push(next);
        }
      }
    }
    return undefined;
  };
  return new Map(files.map((f) => [f, chainOf(pathToFileURL(join(root, f)).href)]));
}

if (import.meta.main) {
  const files = unitTestFiles();
  if (Deno.args.includes("--list")) {
    console.log(files.join("\n"));
    Deno.exit(0);
  }
  const started = Date.now();
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--parallel", ...Deno.args, ...files],
    cwd: root,
  }).spawn().status;
  console.log(
    `\nunit tests (${files.length} files): ${code === 0 ? "ok" : "FAILED"}; ${
      ((Date.now() - started) / 1000).toFixed(1)
    } s`,
  );
  Deno.exit(code);
}
