/**
 * The Gateway API CRDs (standard and experimental channels), copied from the
 * `sigs.k8s.io/gateway-api` module zip (verified by Go's checksum database) into
 * `.cache/peers/gateway-api-crds-<version>/{standard,experimental}/`.
 * @module
 */
import { join } from "node:path";
import { goModuleDir, moduleVersion } from "./go.ts";
import { exists, withFileLock } from "./util.ts";

/** Returns the directory holding `standard/` and `experimental/` CRD YAML files. */
export async function ensureGatewayApiCrds(root: string, cacheDir: string): Promise<string> {
  const goMod = await Deno.readTextFile(join(root, "tools", "peers", "gateway-api", "go.mod"));
  const version = moduleVersion(goMod, "sigs.k8s.io/gateway-api");
  const dir = join(cacheDir, `gateway-api-crds-${version}`);
  if (await exists(join(dir, "experimental"))) return dir;
  await Deno.mkdir(cacheDir, { recursive: true });
  await withFileLock(join(cacheDir, ".gateway-api-crds.lock"), async () => {
    if (!(await exists(join(dir, "experimental")))) await copyCrds(version, dir);
  });
  console.error(`[peers] Gateway API ${version} CRDs ready: ${dir}`);
  return dir;
}

async function copyCrds(version: string, dir: string): Promise<void> {
  console.error(`[peers] fetching Gateway API ${version} CRDs from the Go module proxy …`);
  const src = join(await goModuleDir("sigs.k8s.io/gateway-api", version), "config", "crd");
  const tmp = `${dir}.tmp-${Deno.pid}`;
  await Deno.remove(tmp, { recursive: true }).catch(() => {});
  try {
    for (const channel of ["standard", "experimental"]) {
      await Deno.mkdir(join(tmp, channel), { recursive: true });
      for await (const e of Deno.readDir(join(src, channel))) {
        if (!e.name.endsWith(".yaml") || e.name === "kustomization.yaml") continue;
        // readFile + writeFile, not copyFile: the module cache is read-only and modes would follow.
        await Deno.writeFile(
          join(tmp, channel, e.name),
          await Deno.readFile(join(src, channel, e.name)),
        );
      }
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.rename(tmp, dir);
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}
