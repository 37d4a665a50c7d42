import assert from "node:assert/strict";
import { join } from "node:path";
import { locateEnvoy } from "./locate.ts";

Deno.test("locateEnvoy: PATH first, then the newest in the cache, else an error naming the install step", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-locate-" });
  try {
    const bin = join(dir, "bin"), cache = join(dir, "cache");
    await Deno.mkdir(bin);
    for (const v of ["1.9.2", "1.40.0"]) {
      await Deno.mkdir(join(cache, `envoy-${v}`), { recursive: true });
      await Deno.writeTextFile(join(cache, `envoy-${v}`, "envoy"), "#!/bin/sh\n", { mode: 0o755 });
    }
    await assert.rejects(
      locateEnvoy("auto", { path: bin, cacheDir: join(dir, "none") }),
      /deno task peers ensure envoy/,
    );
    assert.equal(
      await locateEnvoy("auto", { path: bin, cacheDir: cache }),
      join(cache, "envoy-1.40.0", "envoy"),
    );
    await Deno.writeTextFile(join(bin, "envoy"), "#!/bin/sh\n", { mode: 0o755 });
    assert.equal(await locateEnvoy("auto", { path: bin, cacheDir: cache }), join(bin, "envoy"));
    assert.equal(await locateEnvoy(join(bin, "envoy")), join(bin, "envoy"));
    await assert.rejects(locateEnvoy(join(bin, "nope")), /not an executable/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the agent's production code never imports the peer installer", async () => {
  const root = new URL("../../", import.meta.url);
  const graph = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL("agent/main.ts", root).pathname],
    stdout: "piped",
    stderr: "null",
  }).output();
  const info = JSON.parse(new TextDecoder().decode(graph.stdout));
  const modules: string[] = info.modules.map((m: { specifier: string }) => m.specifier);
  assert.ok(modules.some((m) => m.endsWith("/agent/runtime.ts")), "graph read");
  const peers = modules.filter((m) => m.includes("/testbed/"));
  assert.deepEqual(peers, [], "agent/main.ts reaches testbed/");
});
