import assert from "node:assert/strict";
import { join } from "node:path";
import { run } from "../peers/mod.ts";
import { archiveLayerPaths, buildImage, imageConfig, layerEntries } from "./oci.ts";

Deno.test("layerEntries: parents added, base dirs present, sorted, no escapes", () => {
  const e = layerEntries([{ path: "/usr/local/bin/server", data: "x" }, {
    path: "/cert.crt",
    data: "",
  }]);
  assert.deepEqual(e.map((x) => x.path), [
    "cert.crt",
    "dev",
    "etc",
    "proc",
    "sys",
    "tmp",
    "usr",
    "usr/local",
    "usr/local/bin",
    "usr/local/bin/server",
  ]);
  assert.throws(() => layerEntries([{ path: "/a/../../etc/passwd", data: "" }]), /bad image path/);
});

Deno.test("imageConfig: entrypoint, user, default PATH and the layer's diff id", () => {
  const c = imageConfig({ name: "x", entrypoint: ["/a"], user: "65532:65532", files: [] }, "ab");
  assert.deepEqual(c, {
    architecture: "amd64",
    os: "linux",
    config: { Entrypoint: ["/a"], Env: ["PATH=/usr/local/bin:/usr/bin:/bin"], User: "65532:65532" },
    rootfs: { type: "layers", diff_ids: ["sha256:ab"] },
  });
});

Deno.test("buildImage: a reproducible OCI layout archive naming the image for containerd", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-oci-" });
  try {
    const src = join(dir, "prog");
    await Deno.writeTextFile(src, "#!/bin/sh\necho hi\n".repeat(5000));
    await Deno.chmod(src, 0o755);
    const long = "/opt/" + "d".repeat(120) + "/file.txt"; // longer than ustar's 100-byte name
    const spec = {
      name: "docker.io/library/t:1",
      entrypoint: ["/bin/prog"],
      files: [{ path: "/bin/prog", source: src }, { path: long, data: "long" }, {
        path: "/bin/sh",
        symlink: "prog",
      }],
    };
    const a = await buildImage(spec, join(dir, "a.tar"));
    await Deno.utime(src, 12345, 12345); // host mtimes do not leak into the image
    const b = await buildImage(spec, join(dir, "b.tar"));
    assert.equal(a, b);
    assert.deepEqual(
      await Deno.readFile(join(dir, "a.tar")),
      await Deno.readFile(join(dir, "b.tar")),
    );
    const x = join(dir, "x");
    await Deno.mkdir(x);
    await run("tar", ["-xf", join(dir, "a.tar"), "-C", x]);
    const index = JSON.parse(await Deno.readTextFile(join(x, "index.json")));
    assert.equal(index.manifests[0].digest, a);
    assert.equal(
      index.manifests[0].annotations["io.containerd.image.name"],
      "docker.io/library/t:1",
    );
    const manifest = JSON.parse(await Deno.readTextFile(join(x, "blobs/sha256", a.slice(7))));
    const layer = join(x, "blobs/sha256", manifest.layers[0].digest.slice(7));
    assert.equal(manifest.layers[0].mediaType, "application/vnd.oci.image.layer.v1.tar");
    const listing = await run("tar", ["--numeric-owner", "--full-time", "-tvf", layer]);
    assert.match(listing, /^-rwxr-xr-x 0\/0 +90000 1970-01-01 00:00:00 bin\/prog$/m);
    assert.match(listing, /^lrwxrwxrwx 0\/0 .* bin\/sh -> prog$/m);
    assert.ok(listing.includes(long.slice(1)), "long names survive (PAX header)");
    assert.ok(!/ 19[7-9]\d-\d\d-\d\d (?!00:00:00)/.test(listing));
    // The same layer, listed straight from the archive.
    const paths = await archiveLayerPaths(join(dir, "a.tar"));
    assert.deepEqual(paths.filter((p) => !p.endsWith("/")), ["bin/prog", "bin/sh", long.slice(1)]);
    assert.ok(paths.includes("bin/") && paths.includes("tmp/"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
