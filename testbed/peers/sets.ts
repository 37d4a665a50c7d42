/**
 * Named sets of peers: a task ensures a set by its name (`scripts/peers.ts ensure test`), so the
 * list is written once, here, and not in every task that needs it.
 * @module
 */

/** The local cluster node's peers (testbed/cluster/node.ts ensures them on `up`). */
const NODE = [
  "ip",
  "openssl",
  "etcd",
  "containerd",
  "ctr",
  "runc",
  "cni-plugins",
  "iptables",
  "conntrack",
  "socat",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubelet",
  "kube-proxy",
  "coredns",
  "pause",
];

/** Peer sets by name; a set name is never a peer name. */
export const peerSets: Readonly<Record<string, readonly string[]>> = {
  /** What the local cluster's node runs. */
  node: NODE,
  /**
   * Every peer `deno task test` ensures up front (the conformance gate's too), so the Go peers
   * are built one after the other with visible progress rather than inside the first test that
   * needs them: the edge, mesh and DNS tests' peers, the conformance suite's, then the node's.
   */
  test: [
    "envoy",
    "dig",
    "unbound",
    "dnsperf",
    "nft",
    "spire-server",
    "spire-agent",
    "kwok",
    "kwok-stages",
    "gateway-api-crds",
    "mcs-api-crds",
    "gateway-conformance",
    "echo-basic",
    "kubectl",
    "echo-basic-static",
    "busybox",
    "helm",
    "istio-echo-server",
    "istio-echo-client",
    "metallb-controller",
    "cnitool",
    ...NODE,
  ],
};

/**
 * The peers `names` stand for, in order, each once: a set name is its peers, `all` is every
 * peer in `known`, any other name itself.
 */
export function expandPeerNames(names: readonly string[], known: readonly string[]): string[] {
  const out = new Set<string>();
  for (const name of names) {
    for (const peer of name === "all" ? known : peerSets[name] ?? [name]) out.add(peer);
  }
  return [...out];
}
