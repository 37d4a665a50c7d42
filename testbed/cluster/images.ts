/**
 * The local cluster's images, built from peers as OCI layouts (testbed/cluster/oci.ts) and imported
 * into containerd's `k8s.io` namespace, under the exact names the pods ask for.
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { goPeerVersion } from "../peers/mod.ts";
import { goPeers } from "../peers/mod.ts";
import { ensurePeer, projectRoot } from "../peers/mod.ts";
import { goModuleDir } from "../peers/mod.ts";
import { exists, run } from "../peers/mod.ts";
import { buildImage, type ImageSpec } from "./oci.ts";
import { lddPaths } from "./ldd.ts";

/** Image names (full references: CRI normalizes a Pod's `image` to this form). */
export const imageNames = {
  pause: "aether.local/pause:1",
  echoBasic: "gcr.io/k8s-staging-gateway-api/echo-basic:v20260204-monthly-2026.01-60-g28382302",
  echoAdvanced: "gcr.io/k8s-staging-gateway-api/echo-advanced:v20240412-v1.0.0-394-g40c666fd",
  coredns: "registry.k8s.io/coredns/coredns:v1.12.2",
  busybox: "aether.local/busybox:1",
  aether: "aether.local/aether:dev",
  // The name the module's own manifest (config/manifests/metallb-native.yaml) runs.
  metallb: "quay.io/metallb/controller:v0.15.2",
  // The chart's identity.spire.*.image defaults (the upstream names), built from the Go peers.
  spireServer: "ghcr.io/spiffe/spire-server:1.13.3",
  spireAgent: "ghcr.io/spiffe/spire-agent:1.13.3",
} as const;

/** Names of the images this module can build. */
export type ImageKey = keyof typeof imageNames;

/** busybox applets linked in the toolbox image. */
const applets = ["sh", "cat", "ls", "sleep", "nslookup", "wget", "echo", "env", "hostname"];

/** The spec of one of the peer-based images (the aether image is in aether_image.ts). */
export async function peerImageSpec(key: Exclude<ImageKey, "aether">): Promise<ImageSpec> {
  const name = imageNames[key];
  switch (key) {
    case "pause":
      return {
        name,
        entrypoint: ["/pause"],
        user: "65535:65535",
        files: [{ path: "/pause", source: await ensurePeer("pause") }],
      };
    case "echoBasic":
      return {
        name,
        entrypoint: ["/echo-basic"],
        user: "65532:65532",
        files: [{ path: "/echo-basic", source: await ensurePeer("echo-basic-static") }],
      };
    case "coredns":
      return {
        name,
        entrypoint: ["/coredns"],
        user: "65532:65532",
        files: [{ path: "/coredns", source: await ensurePeer("coredns") }],
      };
    case "busybox": {
      const bin = await ensurePeer("busybox");
      return {
        name,
        entrypoint: ["/bin/sh"],
        files: [
          { path: "/bin/busybox", source: bin },
          ...applets.map((a) => ({ path: `/bin/${a}`, symlink: "busybox" })),
        ],
      };
    }
    case "metallb":
      return {
        name,
        entrypoint: ["/controller"],
        user: "65534:65534",
        files: [{ path: "/controller", source: await ensurePeer("metallb-controller") }],
      };
    case "spireServer":
    case "spireAgent": {
      // spire-server links SQLite through cgo: the binary comes with the host libraries it needs.
      const bin = await ensurePeer(key === "spireServer" ? "spire-server" : "spire-agent");
      const exe = key === "spireServer" ? "/spire-server" : "/spire-agent";
      return {
        name,
        entrypoint: [exe],
        files: [
          { path: exe, source: bin },
          ...(await sharedLibraries(bin)).map((lib) => ({ path: lib, source: lib })),
        ],
      };
    }
    case "echoAdvanced": {
      // Istio's app image: server + client, and the test certificate pair its Dockerfile copies
      // (tests/testdata/certs/dns/ of the same module, verified by Go's checksum database).
      const version = await goPeerVersion(projectRoot, goPeers["istio-echo-server"]);
      const certs = join(await goModuleDir("istio.io/istio", version), "tests/testdata/certs/dns");
      return {
        name,
        entrypoint: ["/usr/local/bin/server"],
        user: "1338",
        files: [
          { path: "/usr/local/bin/server", source: await ensurePeer("istio-echo-server") },
          { path: "/usr/local/bin/client", source: await ensurePeer("istio-echo-client") },
          { path: "/cert.crt", source: join(certs, "cert-chain.pem"), mode: 0o644 },
          { path: "/cert.key", source: join(certs, "key.pem"), mode: 0o644 },
        ],
      };
    }
  }
}

/** The paths of a dynamically linked binary's shared libraries and loader (`ldd`; none if static). */
export async function sharedLibraries(bin: string): Promise<string[]> {
  const out = await new Deno.Command("ldd", { args: [bin], stdout: "piped", stderr: "null" })
    .output();
  return lddPaths(new TextDecoder().decode(out.stdout));
}

/** A cache key over a spec: its JSON plus each source file's size and mtime. */
export async function specKey(spec: ImageSpec): Promise<string> {
  const h = createHash("sha256").update(JSON.stringify(spec));
  for (const f of spec.files) {
    if (!f.source) continue;
    const st = await Deno.stat(f.source);
    h.update(`${f.source}:${st.size}:${st.mtime?.getTime()}`);
  }
  return h.digest("hex").slice(0, 16);
}

/**
 * Builds `spec` into `<imagesDir>/<key>.tar` unless that archive exists (built from the same
 * inputs); returns the archive path.
 */
export async function ensureImageArchive(imagesDir: string, spec: ImageSpec): Promise<string> {
  await Deno.mkdir(imagesDir, { recursive: true });
  const base = spec.name.replace(/[^\w.-]+/g, "_");
  const out = join(imagesDir, `${base}-${await specKey(spec)}.tar`);
  if (await exists(out)) return out;
  for await (const e of Deno.readDir(imagesDir)) {
    if (e.name.startsWith(`${base}-`)) await Deno.remove(join(imagesDir, e.name)).catch(() => {});
  }
  await buildImage(spec, out);
  return out;
}

/** Imports an OCI archive into containerd's `k8s.io` namespace (CRI sees it at once). */
export async function importImage(containerdSock: string, archive: string): Promise<void> {
  await run(await ensurePeer("ctr"), [
    "-a",
    containerdSock,
    "-n",
    "k8s.io",
    "images",
    "import",
    archive,
  ]);
}
