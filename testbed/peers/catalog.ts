/**
 * The Go-built peers: which tools module pins each one and how it is built. Versions live only in
 * the tools modules' go.mod files (`tools/peers/<tools>/go.mod`).
 * @module
 */
import type { GoPeer } from "./go.ts";

const k8sVersionFlags = [
  "k8s.io/component-base/version.gitVersion={version}",
  "k8s.io/component-base/version.gitMajor={major}",
  "k8s.io/component-base/version.gitMinor={minor}",
  "k8s.io/component-base/version.gitTreeState=clean",
  "k8s.io/client-go/pkg/version.gitVersion={version}",
  "k8s.io/client-go/pkg/version.gitMajor={major}",
  "k8s.io/client-go/pkg/version.gitMinor={minor}",
];

function k8s(name: string, coldMinutes: number, versionArgs = ["--version"]): GoPeer {
  return {
    name,
    tools: "kubernetes",
    module: "k8s.io/kubernetes",
    pkg: `k8s.io/kubernetes/cmd/${name}`,
    kind: "build",
    coldMinutes,
    xflags: k8sVersionFlags,
    versionArgs,
  };
}

/** Static binaries for the local cluster's images (no libc in an image). */
const staticEnv = { CGO_ENABLED: "0" };

/** Go peers by name. */
export const goPeers: Record<string, GoPeer> = {
  "spire-server": {
    name: "spire-server",
    tools: "spire",
    module: "github.com/spiffe/spire",
    pkg: "github.com/spiffe/spire/cmd/spire-server",
    kind: "build",
    coldMinutes: 13,
    versionArgs: ["--version"],
  },
  "spire-agent": {
    name: "spire-agent",
    tools: "spire",
    module: "github.com/spiffe/spire",
    pkg: "github.com/spiffe/spire/cmd/spire-agent",
    kind: "build",
    coldMinutes: 5,
    versionArgs: ["--version"],
  },
  "kube-apiserver": k8s("kube-apiserver", 8),
  "kube-controller-manager": k8s("kube-controller-manager", 6),
  "kube-scheduler": k8s("kube-scheduler", 3),
  kubelet: k8s("kubelet", 3),
  "kube-proxy": k8s("kube-proxy", 1),
  kubectl: k8s("kubectl", 2, ["version", "--client"]),
  // Our own main with only the plugins the local cluster and the conformance manifests use.
  coredns: {
    name: "coredns",
    tools: "coredns",
    module: "github.com/coredns/coredns",
    pkg: ".",
    kind: "build",
    coldMinutes: 3,
    env: staticEnv,
    versionArgs: ["-version"],
  },
  // The Gateway API mesh conformance image (echo-advanced) wraps Istio's echo server and client.
  "istio-echo-server": {
    name: "istio-echo-server",
    tools: "istio",
    module: "istio.io/istio",
    pkg: "istio.io/istio/pkg/test/echo/cmd/server",
    kind: "build",
    coldMinutes: 3,
    env: staticEnv,
  },
  "istio-echo-client": {
    name: "istio-echo-client",
    tools: "istio",
    module: "istio.io/istio",
    pkg: "istio.io/istio/pkg/test/echo/cmd/client",
    kind: "build",
    coldMinutes: 1,
    env: staticEnv,
  },
  helm: {
    name: "helm",
    tools: "helm",
    module: "helm.sh/helm/v3",
    pkg: "helm.sh/helm/v3/cmd/helm",
    kind: "build",
    coldMinutes: 3,
    xflags: ["helm.sh/helm/v3/internal/version.version={version}"],
    versionArgs: ["version", "--short"],
  },
  // The pod sandbox process of the local cluster (our own 30 lines of Go).
  pause: {
    name: "pause",
    tools: "pause",
    pkg: ".",
    kind: "build",
    coldMinutes: 1,
    env: staticEnv,
  },
  // The local cluster's LoadBalancer implementation (IPAM only: see testbed/cluster/metallb.ts).
  "metallb-controller": {
    name: "metallb-controller",
    tools: "metallb",
    module: "go.universe.tf/metallb",
    pkg: "go.universe.tf/metallb/controller",
    kind: "build",
    coldMinutes: 3,
    env: staticEnv,
  },
  kwok: {
    name: "kwok",
    tools: "kwok",
    module: "sigs.k8s.io/kwok",
    pkg: "sigs.k8s.io/kwok/cmd/kwok",
    kind: "build",
    coldMinutes: 5,
    versionArgs: ["--version"],
  },
  // A paced native HTTP load generator for the latency benches: our own trimmed main (only `load`)
  // over fortio's HTTP runner and histograms.
  fortio: {
    name: "fortio",
    tools: "fortio",
    module: "fortio.org/fortio",
    pkg: ".",
    kind: "build",
    coldMinutes: 2,
    versionArgs: ["version"],
  },
  "gateway-conformance": {
    name: "gateway-conformance",
    tools: "gateway-api",
    module: "sigs.k8s.io/gateway-api/conformance",
    pkg: "sigs.k8s.io/gateway-api/conformance",
    kind: "test",
    coldMinutes: 3,
  },
  "echo-basic": {
    name: "echo-basic",
    tools: "gateway-api",
    module: "sigs.k8s.io/gateway-api/conformance",
    pkg: "sigs.k8s.io/gateway-api/conformance/echo-basic",
    kind: "build",
    coldMinutes: 1,
  },
  // The same server linked statically, as upstream's image builds it, for the echo-basic image.
  "echo-basic-static": {
    name: "echo-basic-static",
    tools: "gateway-api",
    module: "sigs.k8s.io/gateway-api/conformance",
    pkg: "sigs.k8s.io/gateway-api/conformance/echo-basic",
    kind: "build",
    coldMinutes: 1,
    env: staticEnv,
  },
  // libcni's own driver (containerd 1.6 vendors libcni v1.1.1; v1.1.2 is that line's last): runs a
  // conflist's plugins the way the runtime does, for the CNI plugin's invocation tests.
  cnitool: {
    name: "cnitool",
    tools: "cnitool",
    module: "github.com/containernetworking/cni",
    pkg: "github.com/containernetworking/cni/cnitool",
    kind: "build",
    coldMinutes: 1,
    env: staticEnv,
  },
  egctl: {
    name: "egctl",
    tools: "envoy-gateway",
    module: "github.com/envoyproxy/gateway",
    pkg: "github.com/envoyproxy/gateway/cmd/egctl",
    kind: "build",
    coldMinutes: 8,
    xflags: ["github.com/envoyproxy/gateway/internal/cmd/version.envoyGatewayVersion={version}"],
    versionArgs: ["version", "--remote=false"],
  },
};
