/**
 * The local cluster's configuration files, rendered from a {@link Layout} (pure; golden-tested).
 * Keys and values are the ones measured on this machine kind (docs/kubernetes.md explains each
 * unusual one).
 * @module
 */
import { stringify } from "yaml";
import { type Layout, paths } from "./layout.ts";

/** containerd 1.6 config (schema v2) with the CRI plugin pointed at our runc, CNI and state. */
export function containerdConfig(l: Layout, runc: string, cniBinDir: string): string {
  const p = paths(l);
  const cri = `plugins."io.containerd.grpc.v1.cri"`;
  return `version = 2
root = "${p.containerdRoot}"
state = "${p.containerdState}"

[grpc]
  address = "${p.containerdSock}"

[${cri}]
  sandbox_image = "${l.sandboxImage}"
  # Pod network namespaces under /run/netns (containerd's default, as on Talos), the folder the
  # chart mounts into the node agent and node proxy (HostToContainer) to reach them.
  netns_mounts_under_state_dir = false
  disable_apparmor = true
  # The VM drops CAP_SYS_RESOURCE: runc cannot lower oom_score_adj to the kubelet's -998.
  restrict_oom_score_adj = true
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  BinaryName = "${runc}"
  Root = "${p.runcRoot}"

[${cri}.cni]
  bin_dir = "${cniBinDir}"
  conf_dir = "${p.cniConfDir}"
  max_conf_num = 1
`;
}

/** The CNI network: a bridge with host-local IPAM, plus portmap (containerd adds loopback itself). */
export function cniConflist(l: Layout): string {
  return JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: l.bridge,
      plugins: [
        {
          type: "bridge",
          bridge: l.bridge,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            dataDir: paths(l).cniIpamDir,
            ranges: [[{ subnet: l.podCidr, gateway: l.bridgeIp }]],
            routes: [{ dst: "0.0.0.0/0" }],
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  ) + "\n";
}

/** KubeletConfiguration for a cgroup v1, systemd-less host with containerd 1.6. */
export function kubeletConfig(l: Layout): string {
  const p = paths(l);
  return stringify({
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    // The host has cgroup v1; the default refuses it since 1.35 (KEP-5573).
    failCgroupV1: false,
    // containerd 1.6 has no RuntimeConfig RPC; the kubelet falls back to this (until 1.38).
    cgroupDriver: "cgroupfs",
    containerRuntimeEndpoint: `unix://${p.containerdSock}`,
    address: l.nodeIp,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: 10248,
    tlsCertFile: p.pkiFile("kubelet-serving.crt"),
    tlsPrivateKeyFile: p.pkiFile("kubelet-serving.key"),
    // Bearer tokens checked with the API server (TokenReview) and every request authorized by it
    // (SubjectAccessReview), as on real clusters and Talos: SPIRE's k8s workload attestor reads
    // /pods with its service account token.
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true, cacheTTL: "30s" },
      x509: { clientCAFile: p.pkiFile("ca.crt") },
    },
    authorization: { mode: "Webhook" },
    clusterDomain: "cluster.local",
    clusterDNS: [l.bridgeIp],
    resolvConf: p.resolvConf,
    podLogsDir: p.kubeletLogs,
    staticPodPath: p.manifests,
    failSwapOn: false,
    serializeImagePulls: false,
    syncFrequency: "10s",
    fileCheckFrequency: "5s",
    nodeStatusUpdateFrequency: "5s",
    evictionHard: {
      "memory.available": "100Mi",
      "nodefs.available": "2%",
      "imagefs.available": "2%",
      "nodefs.inodesFree": "2%",
    },
    // Never garbage-collect the imported images: there is no registry to pull them back from.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
  });
}

/** kube-proxy in iptables mode inside the node netns, leaving the global conntrack sysctls alone. */
export function kubeProxyConfig(l: Layout): string {
  return stringify({
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    clientConnection: { kubeconfig: paths(l).adminKubeconfig },
    mode: "iptables",
    hostnameOverride: l.nodeName,
    clusterCIDR: l.podCidr,
    bindAddress: l.nodeIp,
    healthzBindAddress: "127.0.0.1:10256",
    metricsBindAddress: "127.0.0.1:10249",
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
  });
}

/**
 * CoreDNS for the cluster domain on :53 of the node netns (only there): pods ask the bridge address.
 */
export function corefile(l: Layout): string {
  return `.:53 {
    errors
    health 127.0.0.1:8081
    ready 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${paths(l).adminKubeconfig} aether
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
`;
}

/** A kubeconfig with embedded client cert and key, context `aether`. */
export function kubeconfig(server: string, ca: string, cert: string, key: string): string {
  const b64 = (s: string) => btoa(s);
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name: "aether",
      cluster: { server, "certificate-authority-data": b64(ca) },
    }],
    users: [{
      name: "aether",
      user: { "client-certificate-data": b64(cert), "client-key-data": b64(key) },
    }],
    contexts: [{ name: "aether", context: { cluster: "aether", user: "aether" } }],
    "current-context": "aether",
  });
}
