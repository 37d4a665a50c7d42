/**
 * Builds the Envoy Gateway translation harness (tools/peers/envoy-gateway-harness/, outside any Go module): copies the
 * Envoy Gateway module pinned in tools/peers/envoy-gateway/go.mod out of Go's module cache into a
 * temporary folder, places the harness test file in `internal/aetherbench/` (only code inside the
 * module may import its `internal/` packages) and compiles it with `go test -c`. The binary is
 * cached in the peer cache under a name holding the harness file's hash; Go builds are serialized
 * with the peers' build lock.
 * @module
 */
import { join } from "node:path";
import { peersDir, projectRoot } from "../testbed/peers/mod.ts";
import { findGo, goModuleDir, moduleVersion } from "../testbed/peers/mod.ts";
import { exists, run, withFileLock } from "../testbed/peers/mod.ts";
import { createHash } from "node:crypto";

const hashText = (t: string) => createHash("sha256").update(t).digest("hex").slice(0, 12);

const MODULE = "github.com/envoyproxy/gateway";

/** The harness binary, built when missing. */
export async function ensureEgHarness(): Promise<string> {
  const tools = join(projectRoot, "tools", "peers", "envoy-gateway");
  const version = moduleVersion(await Deno.readTextFile(join(tools, "go.mod")), MODULE);
  const source = await Deno.readTextFile(
    join(projectRoot, "tools", "peers", "envoy-gateway-harness", "translate_test.go"),
  );
  const dir = join(peersDir, `eg-harness-${version}-${hashText(source)}`);
  const bin = join(dir, "eg-harness");
  if (await exists(bin)) return bin;
  await Deno.mkdir(peersDir, { recursive: true });
  return await withFileLock(join(peersDir, ".go-build.lock"), async () => {
    if (await exists(bin)) return bin;
    const go = await findGo();
    const src = await goModuleDir(MODULE, version);
    const tmp = await Deno.makeTempDir({ prefix: "aether-eg-harness-" });
    try {
      console.error(`[bench] building the Envoy Gateway ${version} translation harness …`);
      await run("cp", ["-r", `${src}/.`, tmp]);
      await run("chmod", ["-R", "u+w", tmp]);
      await Deno.mkdir(join(tmp, "internal", "aetherbench"), { recursive: true });
      await Deno.writeTextFile(join(tmp, "internal", "aetherbench", "translate_test.go"), source);
      await Deno.mkdir(dir, { recursive: true });
      await run("nice", [
        "-n",
        "19",
        go.bin,
        "test",
        "-c",
        // As the egctl peer is built, so the packages it compiled are reused from Go's cache.
        "-trimpath",
        "-vet=off",
        "-o",
        bin,
        "./internal/aetherbench",
      ], { cwd: tmp, env: { GOTOOLCHAIN: "local", GOFLAGS: "-mod=mod" } });
      return bin;
    } finally {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  });
}
