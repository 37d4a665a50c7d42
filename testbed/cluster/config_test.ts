import assert from "node:assert/strict";
import { parse } from "yaml";
import {
  cniConflist,
  containerdConfig,
  corefile,
  kubeletConfig,
  kubeProxyConfig,
} from "./config.ts";
import { defaultLayout } from "./layout.ts";
import { netUpCommands } from "./net.ts";
import { pkiScript } from "./pki.ts";

const update = Deno.env.get("UPDATE_GOLDEN") === "1";
const l = defaultLayout("/state");

function golden(file: string, actual: string) {
  const path = new URL(`./testdata/${file}`, import.meta.url);
  if (update) Deno.writeTextFileSync(path, actual);
  let want: string;
  try {
    want = Deno.readTextFileSync(path);
  } catch {
    throw new Error(`${file} missing: run UPDATE_GOLDEN=1 deno test -A testbed/cluster`);
  }
  assert.equal(actual, want, `${file} differs (UPDATE_GOLDEN=1 regenerates after review)`);
}

Deno.test("cluster config golden files (UPDATE_GOLDEN=1 regenerates)", () => {
  golden("containerd.toml", containerdConfig(l, "/usr/sbin/runc", "/usr/lib/cni"));
  golden("cni.conflist", cniConflist(l));
  golden("kubelet.yaml", kubeletConfig(l));
  golden("kube-proxy.yaml", kubeProxyConfig(l));
  golden("Corefile", corefile(l));
  golden("pki.sh", pkiScript(l));
  golden("net-up.txt", netUpCommands(l).map((c) => `ip ${c.join(" ")}`).join("\n") + "\n");
});

Deno.test("the settings this machine kind needs are in the configs", () => {
  const toml = containerdConfig(l, "/usr/sbin/runc", "/usr/lib/cni");
  assert.match(toml, /restrict_oom_score_adj = true/); // no CAP_SYS_RESOURCE in the VM
  assert.match(toml, /sandbox_image = "aether\.local\/pause:1"/);
  assert.match(toml, /SystemdCgroup = false/);
  const kubelet = parse(kubeletConfig(l));
  assert.equal(kubelet.failCgroupV1, false);
  assert.equal(kubelet.cgroupDriver, "cgroupfs");
  assert.deepEqual(kubelet.clusterDNS, [l.bridgeIp]);
  assert.equal(kubelet.address, l.nodeIp);
  assert.equal(kubelet.healthzBindAddress, "127.0.0.1");
  const proxy = parse(kubeProxyConfig(l));
  assert.equal(proxy.conntrack.maxPerCore, 0); // leaves the machine-wide conntrack sysctls alone
  const cni = JSON.parse(cniConflist(l));
  assert.deepEqual(cni.plugins.map((p: { type: string }) => p.type), ["bridge", "portmap"]);
  // Host routes: pod CIDR and the LoadBalancer range both into the node netns.
  const routes = netUpCommands(l).filter((c) => c[0] === "route");
  assert.deepEqual(routes.map((r) => r[2]), [l.podCidr, l.lbCidr]);
});
