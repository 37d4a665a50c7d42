/**
 * Where the local cluster lives: addresses, names and state paths. Pure data; every other module
 * of `testbed/cluster` takes a {@link Layout}.
 * @module
 */
import { join } from "node:path";

/** Addresses and names of the one-node cluster. */
export interface Layout {
  /** State folder (git-ignored): PKI, etcd data, containerd root, kubelet root, logs, pid files. */
  dir: string;
  /** Network namespace holding the whole node (control plane, kubelet, containerd, pods' bridge). */
  netns: string;
  /** veth end in the root netns. */
  hostIf: string;
  /** veth end in the node netns (the node's interface). */
  nodeIf: string;
  /** Root netns side of the veth, /30. */
  hostIp: string;
  /** Node IP: API server advertise address, kubelet address. */
  nodeIp: string;
  /** Pod CIDR on the CNI bridge. */
  podCidr: string;
  /** The bridge's name and address (the pods' gateway and their DNS server). */
  bridge: string;
  bridgeIp: string;
  /** Service ClusterIP range; the `kubernetes` Service gets its first address. */
  serviceCidr: string;
  apiServiceIp: string;
  /** Range routed from the host into the node netns for Gateway LoadBalancer addresses. */
  lbCidr: string;
  /** Node name (kubelet `--hostname-override`). */
  nodeName: string;
  /** The pod sandbox image (our pause program). */
  sandboxImage: string;
}

/** The default layout, state in `dir`. */
export function defaultLayout(dir: string): Layout {
  return {
    dir,
    netns: "aether-node",
    hostIf: "aether-h",
    nodeIf: "aether-n",
    hostIp: "10.215.0.1",
    nodeIp: "10.215.0.2",
    podCidr: "10.213.0.0/24",
    bridge: "aether0",
    bridgeIp: "10.213.0.1",
    serviceCidr: "10.214.0.0/24",
    apiServiceIp: "10.214.0.1",
    lbCidr: "10.216.0.0/24",
    nodeName: "aether-node",
    sandboxImage: "aether.local/pause:1",
  };
}

/** Paths below the state folder. */
export function paths(l: Layout) {
  const d = (...p: string[]) => join(l.dir, ...p);
  return {
    pki: d("pki"),
    pkiFile: (f: string) => d("pki", f),
    adminKubeconfig: d("admin.kubeconfig"),
    kubeletKubeconfig: d("kubelet.kubeconfig"),
    etcdData: d("etcd-data"),
    containerdDir: d("containerd"),
    containerdConfig: d("containerd", "config.toml"),
    containerdSock: d("containerd", "containerd.sock"),
    containerdRoot: d("containerd", "root"),
    containerdState: d("containerd", "state"),
    runcRoot: d("containerd", "runc"),
    cniConfDir: d("cni", "net.d"),
    /**
     * containerd's CNI bin folder: links to the Debian plugins, and where aether's node agent
     * installs its own plugin (the host's plugin folder stays untouched).
     */
    cniBinDir: d("cni", "bin"),
    cniIpamDir: d("cni", "ipam"),
    /** The chart's agentRunDir and agentStateDir on this node (chartNodeValues). */
    agentRunDir: d("aether", "run"),
    agentStateDir: d("aether", "state"),
    kubeletConfig: d("kubelet-config.yaml"),
    kubeletRoot: d("kubelet-root"),
    kubeletLogs: d("kubelet-logs"),
    manifests: d("manifests"),
    resolvConf: d("resolv.conf"),
    corefile: d("Corefile"),
    kubeProxyConfig: d("kube-proxy.yaml"),
    apiserverCerts: d("apiserver-certs"),
    logs: d("logs"),
    pids: d("pids"),
    images: d("images"),
    /** The sysctl values seen before the first kubelet start, restored by `down`. */
    sysctls: d("sysctls.json"),
    /** Present while the cluster is up (written last by `up`). */
    ready: d("ready.json"),
  };
}

/** The kubelet rewrites these machine-wide sysctls at start; `down` restores them. */
export const kubeletSysctls = ["vm.overcommit_memory", "kernel.panic", "kernel.panic_on_oops"];

/** containerd 1.6 hard-wires shim sockets and fifos here, whatever its `state` says. */
export const containerdRunDirs = ["/run/containerd/fifo", "/run/containerd/s", "/run/containerd"];

/**
 * The chart values that fit this node (`--set` arguments): its CNI folders, where aether's CNI
 * plugin goes, its cluster DNS address, whose queries captured pods send to the node agent, and
 * the node agent's host folders under the cluster's own. Everything else stays the chart's
 * default, as a user's install would.
 */
export function chartNodeValues(l: Layout): string[] {
  const p = paths(l);
  return [
    `--set=cni.binDir=${p.cniBinDir}`,
    `--set=cni.confDir=${p.cniConfDir}`,
    `--set=capture.clusterDns={${l.bridgeIp}}`,
    // The node agent's sockets and state under the cluster's folder, not the host's /run/aether
    // and /var/lib/aether: the tests on this machine that run aether's CNI plugin with its default
    // socket path must not find this cluster's agent there.
    `--set=agentRunDir=${p.agentRunDir}`,
    `--set=agentStateDir=${p.agentStateDir}`,
  ];
}
