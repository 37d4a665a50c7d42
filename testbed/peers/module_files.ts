/**
 * Data peers copied out of Go module zips (verified by Go's checksum database):
 * - `gateway-api-crds`: the Gateway API CRDs, `standard/` and `experimental/` channels, from
 *   `sigs.k8s.io/gateway-api` `config/crd/`;
 * - `mcs-api-crds`: the Multi-Cluster Services API CRDs (ServiceExport, ServiceImport), from
 *   `sigs.k8s.io/mcs-api` `config/crd/`;
 * - `kwok-stages`: kwok's "fast" node and pod lifecycle stages (`kustomize/stage/…`), which the kwok
 *   binary needs as `--config` files.
 * Each lands in `.cache/peers/<name>-<version>/<folder>/`.
 * @module
 */
import { join } from "node:path";
import { goModuleDir, moduleVersion } from "./go.ts";
import { exists, withFileLock } from "./util.ts";

/** A folder of YAML files copied from a Go module. */
interface ModuleFiles {
  name: string;
  /** Tools module whose go.mod pins `module`. */
  tools: string;
  module: string;
  /** Destination folder → source folder inside the module. */
  folders: Record<string, string>;
}

/** Data peers by name. */
export const filePeers: Record<string, ModuleFiles> = {
  "gateway-api-crds": {
    name: "gateway-api-crds",
    tools: "gateway-api",
    module: "sigs.k8s.io/gateway-api",
    folders: { standard: "config/crd/standard", experimental: "config/crd/experimental" },
  },
  "mcs-api-crds": {
    name: "mcs-api-crds",
    tools: "mcs-api",
    module: "sigs.k8s.io/mcs-api",
    folders: { crds: "config/crd" },
  },
  "kwok-stages": {
    name: "kwok-stages",
    tools: "kwok",
    module: "sigs.k8s.io/kwok",
    folders: {
      node: "kustomize/stage/node/fast",
      "node-heartbeat": "kustomize/stage/node/heartbeat",
      pod: "kustomize/stage/pod/fast",
    },
  },
};

/** Returns the directory holding the peer's folders of YAML files. */
export async function ensureModuleFiles(
  root: string,
  cacheDir: string,
  peer: ModuleFiles,
): Promise<string> {
  const goMod = await Deno.readTextFile(join(root, "tools", "peers", peer.tools, "go.mod"));
  const version = moduleVersion(goMod, peer.module);
  const dir = join(cacheDir, `${peer.name}-${version}`);
  const done = join(dir, Object.keys(peer.folders).at(-1)!);
  if (await exists(done)) return dir;
  await Deno.mkdir(cacheDir, { recursive: true });
  await withFileLock(join(cacheDir, `.${peer.name}.lock`), async () => {
    if (await exists(done)) return;
    console.error(`[peers] fetching ${peer.name} ${version} from the Go module proxy …`);
    await copyFolders(await goModuleDir(peer.module, version), peer.folders, dir);
    console.error(`[peers] ${peer.name} ${version} ready: ${dir}`);
  });
  return dir;
}

async function copyFolders(src: string, folders: Record<string, string>, dir: string) {
  const tmp = `${dir}.tmp-${Deno.pid}`;
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
  try {
    for (const [to, from] of Object.entries(folders)) {
      await Deno.mkdir(join(tmp, to), { recursive: true });
      for await (const e of Deno.readDir(join(src, from))) {
        if (!e.name.endsWith(".yaml") || e.name === "kustomization.yaml") continue;
        // readFile + writeFile, not copyFile: the module cache is read-only and modes would follow.
        await Deno.writeFile(join(tmp, to, e.name), await Deno.readFile(join(src, from, e.name)));
      }
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.rename(tmp, dir);
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}
