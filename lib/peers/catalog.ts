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

function k8s(name: string, coldMinutes: number): GoPeer {
  return {
    name,
    tools: "kubernetes",
    module: "k8s.io/kubernetes",
    pkg: `k8s.io/kubernetes/cmd/${name}`,
    kind: "build",
    coldMinutes,
    xflags: k8sVersionFlags,
    versionArgs: ["--version"],
  };
}

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
  kwok: {
    name: "kwok",
    tools: "kwok",
    module: "sigs.k8s.io/kwok",
    pkg: "sigs.k8s.io/kwok/cmd/kwok",
    kind: "build",
    coldMinutes: 5,
    versionArgs: ["--version"],
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
