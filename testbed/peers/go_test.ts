import assert from "node:assert/strict";
import { join } from "node:path";
import { goPeers } from "./catalog.ts";
import { compareVersions, goArgs, goDirective, goPeerVersion, moduleVersion } from "./go.ts";
import { peerNames, projectRoot } from "./mod.ts";

Deno.test("moduleVersion: replace target wins over require; block and single-line forms", () => {
  const goMod = `module x

go 1.26.0

require k8s.io/kubernetes v1.37.2

require (
	k8s.io/api v0.0.0
	sigs.k8s.io/gateway-api/conformance v1.5.1 // indirect
)

replace (
	k8s.io/api => k8s.io/api v0.37.2
)
replace sigs.k8s.io/gateway-api => sigs.k8s.io/gateway-api v1.5.1
`;
  assert.equal(moduleVersion(goMod, "k8s.io/kubernetes"), "v1.37.2");
  assert.equal(moduleVersion(goMod, "k8s.io/api"), "v0.37.2");
  assert.equal(moduleVersion(goMod, "sigs.k8s.io/gateway-api"), "v1.5.1");
  assert.equal(moduleVersion(goMod, "sigs.k8s.io/gateway-api/conformance"), "v1.5.1");
  assert.throws(() => moduleVersion(goMod, "k8s.io/client-go"), /does not require/);
  assert.equal(goDirective(goMod), "1.26.0");
});

Deno.test("compareVersions orders dotted Go versions", () => {
  assert.ok(compareVersions("1.26.8", "1.26.5") > 0);
  assert.ok(compareVersions("1.25.9", "1.26") < 0);
  assert.equal(compareVersions("1.26", "1.26.0"), 0);
});

Deno.test("every Go peer's tools module pins the expected release", async () => {
  const want: Record<string, string> = {
    "spire-server": "v1.13.3",
    "spire-agent": "v1.13.3",
    "kube-apiserver": "v1.37.2",
    "kube-controller-manager": "v1.37.2",
    "kube-scheduler": "v1.37.2",
    "gateway-conformance": "v1.5.1",
    "echo-basic": "v1.5.1",
    egctl: "v1.8.3",
    kwok: "v0.8.0",
    kubelet: "v1.37.2",
    "kube-proxy": "v1.37.2",
    kubectl: "v1.37.2",
    coredns: "v1.15.0",
    "istio-echo-server": "v0.0.0-20260827124520-eed52ebb66ad",
    "istio-echo-client": "v0.0.0-20260827124520-eed52ebb66ad",
    helm: "v3.22.0",
    pause: "v0",
    "echo-basic-static": "v1.5.1",
    "metallb-controller": "v0.15.2",
    fortio: "v1.75.3",
    cnitool: "v1.1.2",
  };
  assert.deepEqual(Object.keys(goPeers).sort(), Object.keys(want).sort());
  for (const [name, peer] of Object.entries(goPeers)) {
    assert.equal(await goPeerVersion(projectRoot, peer), want[name], name);
    assert.ok(peerNames.includes(name));
    if (!peer.module) continue; // the project's own program, no dependencies to sum
    const goSum = await Deno.stat(join(projectRoot, "tools", "peers", peer.tools, "go.sum"));
    assert.ok(goSum.size > 0, `${peer.tools}/go.sum is committed`);
  }
  assert.ok(peerNames.includes("gateway-api-crds"));
  assert.ok(peerNames.includes("kwok-stages"));
});

Deno.test("an old Go toolchain is a clear error naming what to install", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-oldgo-" });
  try {
    const fakeGo = join(dir, "go");
    await Deno.writeTextFile(fakeGo, "#!/bin/sh\necho go1.21.0\n");
    await Deno.chmod(fakeGo, 0o755);
    const code = `import { ensurePeer } from ${
      JSON.stringify(new URL("./mod.ts", import.meta.url).href)
    };
      await ensurePeer("echo-basic");`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", code],
      env: { AETHER_GO: fakeGo, AETHER_PEERS_DIR: join(dir, "peers"), NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.success, false);
    assert.match(stderr, /peer echo-basic needs Go ≥ 1\.26 .* is go1\.21\.0: install Go ≥ 1\.26/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("goArgs: stripped, trimmed builds; Kubernetes version variables from the pin", () => {
  const args = goArgs(goPeers["kube-apiserver"], "v1.37.2", "/out/kube-apiserver");
  assert.deepEqual(args.slice(0, 3), ["build", "-trimpath", "-buildvcs=false"]);
  assert.ok(
    args[3].startsWith("-ldflags=-s -w -X k8s.io/component-base/version.gitVersion=v1.37.2"),
  );
  assert.ok(args[3].includes("-X k8s.io/component-base/version.gitMinor=37"));
  assert.deepEqual(args.slice(-2), ["-o", "/out/kube-apiserver"]);
  const test = goArgs(goPeers["gateway-conformance"], "v1.5.1", "/out/c");
  assert.deepEqual(test, ["test", "-c", "-trimpath", "-ldflags=-s -w", "-o", "/out/c"]);
});
