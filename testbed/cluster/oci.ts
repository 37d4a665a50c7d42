/**
 * OCI image layouts without a registry or a container engine: one uncompressed tar layer, the image
 * config, the manifest and an `index.json` whose descriptor carries `io.containerd.image.name`, all
 * in one tar archive that `ctr images import` takes. Everything has mtime 0 and uid/gid 0 and the
 * entries are sorted, so the same inputs give the same digests.
 * @module
 */
import { createHash } from "node:crypto";
import { once } from "node:events";
import tar from "tar-stream";
import type { Header, Pack } from "tar-stream";
import { run } from "../peers/mod.ts";

/** One entry of an image's file system. */
export interface ImageFile {
  /** Path inside the image, absolute (`/usr/local/bin/server`). */
  path: string;
  /** A host file to copy (regular files), or … */
  source?: string;
  /** … the content itself. */
  data?: Uint8Array | string;
  /** A symlink target instead of content. */
  symlink?: string;
  /** Mode bits; default: the source's mode, or 0o644. */
  mode?: number;
}

/** An image to build. */
export interface ImageSpec {
  /** The full reference CRI will ask for (`docker.io/library/x:1`, `registry.k8s.io/…`). */
  name: string;
  entrypoint: string[];
  cmd?: string[];
  env?: string[];
  /** `uid:gid`. */
  user?: string;
  workingDir?: string;
  files: ImageFile[];
}

/** Directories every image has (the runtime mounts over some of them). */
const baseDirs = ["/dev", "/etc", "/proc", "/sys", "/tmp"];

/** The sorted list of directories and files of the layer, parents included (pure). */
export function layerEntries(files: ImageFile[]): { path: string; file?: ImageFile }[] {
  const dirs = new Set<string>(baseDirs.map((d) => d.slice(1)));
  const byPath = new Map<string, ImageFile>();
  for (const f of files) {
    const rel = f.path.replace(/^\/+/, "").replace(/\/+$/, "");
    if (!rel || rel.split("/").includes("..")) throw new Error(`bad image path ${f.path}`);
    byPath.set(rel, f);
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"));
  }
  for (const p of byPath.keys()) dirs.delete(p);
  const all = [
    ...[...dirs].map((path) => ({ path })),
    ...[...byPath].map(([path, file]) => ({ path, file })),
  ];
  return all.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

const fixed = { mtime: new Date(0), uid: 0, gid: 0, uname: "", gname: "" };

async function addEntry(
  pack: Pack,
  header: Partial<Header> & { name: string },
  body?: Uint8Array | string,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    pack.entry(
      { ...fixed, ...header } as Header,
      body ?? "",
      (err) => err ? reject(err) : resolve(),
    );
  });
}

async function addFile(pack: Pack, name: string, source: string, mode?: number): Promise<void> {
  const st = await Deno.stat(source);
  const done = new Promise<void>((resolve, reject) => {
    const entry = pack.entry(
      { ...fixed, name, size: st.size, mode: mode ?? (st.mode ?? 0o644) & 0o7777, type: "file" },
      (err) => err ? reject(err) : resolve(),
    );
    (async () => {
      using file = await Deno.open(source);
      for await (const chunk of file.readable) {
        if (!entry.write(chunk)) await once(entry, "drain");
      }
      entry.end(undefined);
    })().catch(reject);
  });
  await done;
}

/** Writes a tar of `fill`'s entries to `out`; returns the sha256 hex digest and size. */
async function writeTar(
  out: string,
  fill: (pack: Pack) => Promise<void>,
): Promise<{ digest: string; size: number }> {
  const pack = tar.pack();
  const hash = createHash("sha256");
  using file = await Deno.open(out, { write: true, create: true, truncate: true });
  let size = 0;
  const drain = (async () => {
    for await (const chunk of pack as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      size += chunk.length;
      let off = 0;
      while (off < chunk.length) off += await file.write(chunk.subarray(off));
    }
  })();
  try {
    await fill(pack);
    pack.finalize();
  } catch (e) {
    pack.destroy(e as Error);
    await drain.catch(() => {});
    throw e;
  }
  await drain;
  return { digest: hash.digest("hex"), size };
}

function sha256(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** The image config JSON (pure). */
export function imageConfig(spec: ImageSpec, layerDigest: string): Record<string, unknown> {
  const config: Record<string, unknown> = {
    Entrypoint: spec.entrypoint,
    Env: spec.env ?? ["PATH=/usr/local/bin:/usr/bin:/bin"],
  };
  if (spec.cmd) config.Cmd = spec.cmd;
  if (spec.user) config.User = spec.user;
  if (spec.workingDir) config.WorkingDir = spec.workingDir;
  return {
    architecture: "amd64",
    os: "linux",
    config,
    rootfs: { type: "layers", diff_ids: [`sha256:${layerDigest}`] },
  };
}

/** Builds the image as an OCI layout archive at `out`; returns the manifest digest. */
export async function buildImage(spec: ImageSpec, out: string): Promise<string> {
  const layerPath = `${out}.layer-${Deno.pid}`;
  try {
    const layer = await writeTar(layerPath, async (pack) => {
      for (const { path, file } of layerEntries(spec.files)) {
        if (!file) {
          const mode = path === "tmp" ? 0o1777 : 0o755;
          await addEntry(pack, { name: `${path}/`, type: "directory", mode });
        } else if (file.symlink !== undefined) {
          await addEntry(pack, {
            name: path,
            type: "symlink",
            linkname: file.symlink,
            mode: 0o777,
          });
        } else if (file.source) await addFile(pack, path, file.source, file.mode);
        else {
          await addEntry(pack, { name: path, type: "file", mode: file.mode ?? 0o644 }, file.data);
        }
      }
    });
    const enc = new TextEncoder();
    const config = enc.encode(JSON.stringify(imageConfig(spec, layer.digest)));
    const manifest = enc.encode(JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: `sha256:${sha256(config)}`,
        size: config.length,
      },
      layers: [{
        mediaType: "application/vnd.oci.image.layer.v1.tar",
        digest: `sha256:${layer.digest}`,
        size: layer.size,
      }],
    }));
    const manifestDigest = sha256(manifest);
    const index = JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [{
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        digest: `sha256:${manifestDigest}`,
        size: manifest.length,
        annotations: { "io.containerd.image.name": spec.name },
      }],
    });
    const tmp = `${out}.tmp-${Deno.pid}`;
    await writeTar(tmp, async (pack) => {
      await addEntry(pack, { name: "blobs/", type: "directory", mode: 0o755 });
      await addEntry(pack, { name: "blobs/sha256/", type: "directory", mode: 0o755 });
      const blobs: [string, Uint8Array | string][] = [
        [sha256(config), config],
        [manifestDigest, manifest],
      ];
      const sorted = [...blobs.map(([d]) => d), layer.digest].sort();
      for (const d of sorted) {
        const name = `blobs/sha256/${d}`;
        if (d === layer.digest) await addFile(pack, name, layerPath, 0o644);
        else {await addEntry(
            pack,
            { name, type: "file", mode: 0o644 },
            blobs.find(([x]) => x === d)![1],
          );}
      }
      await addEntry(pack, { name: "index.json", type: "file", mode: 0o644 }, index);
      await addEntry(
        pack,
        { name: "oci-layout", type: "file", mode: 0o644 },
        '{"imageLayoutVersion":"1.0.0"}',
      );
    });
    await Deno.rename(tmp, out);
    return `sha256:${manifestDigest}`;
  } finally {
    await Deno.remove(layerPath).catch(() => {});
    await Deno.remove(`${out}.tmp-${Deno.pid}`).catch(() => {});
  }
}

/**
 * The paths in the layer of an OCI archive {@link buildImage} wrote, as `tar -t` lists them
 * (directories end in `/`); the layer is streamed, not unpacked.
 */
export async function archiveLayerPaths(archive: string): Promise<string[]> {
  const member = async (name: string) => JSON.parse(await run("tar", ["-xOf", archive, name]));
  const blob = (digest: string) => `blobs/sha256/${digest.replace(/^sha256:/, "")}`;
  const index = await member("index.json");
  const manifest = await member(blob(index.manifests[0].digest));
  const layer = blob(manifest.layers[0].digest);
  const extract = new Deno.Command("tar", { args: ["-xOf", archive, layer], stdout: "piped" })
    .spawn();
  const list = new Deno.Command("tar", {
    args: ["-tf", "-"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const [, listed, extracted] = await Promise.all([
    extract.stdout.pipeTo(list.stdin),
    list.output(),
    extract.status,
  ]);
  if (!listed.success || !extracted.success) {
    throw new Error(
      `listing ${layer} of ${archive} failed: ${new TextDecoder().decode(listed.stderr)}`,
    );
  }
  return new TextDecoder().decode(listed.stdout).split("\n").filter(Boolean);
}
