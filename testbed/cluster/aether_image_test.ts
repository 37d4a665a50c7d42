import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { imageLibraries, lddPathOf, NFTABLES_SONAME, parseLdd } from "./aether_image.ts";

Deno.test("parseLdd: resolved libraries and the loader, not the vDSO", () => {
  const out = `	linux-vdso.so.1 (0x00007ffd)
	libdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x00007f)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)
	/lib64/ld-linux-x86-64.so.2 (0x00007f)
`;
  assert.deepEqual(parseLdd(out), [
    "/lib/x86_64-linux-gnu/libdl.so.2",
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/lib64/ld-linux-x86-64.so.2",
  ]);
});

Deno.test("lddPathOf: the path one soname resolved to", () => {
  const out = `	linux-vdso.so.1 (0x00007ffd)
	libnftables.so.1 => /lib/x86_64-linux-gnu/libnftables.so.1 (0x00007f)
	libedit.so.2 => /lib/x86_64-linux-gnu/libedit.so.2 (0x00007f)
`;
  assert.equal(lddPathOf(out, "libnftables.so.1"), "/lib/x86_64-linux-gnu/libnftables.so.1");
  assert.equal(lddPathOf(out, "libnftables.so"), undefined);
});

/**
 * The image's libraries alone (and the Deno binary) in an empty root (unshare + chroot, root
 * only): Deno there opens
 * libnftables with `Deno.dlopen` by its soname, as agent/capture does, and makes a context
 * (which opens its netlink socket). Without the libnftables files the same call fails.
 */
Deno.test("image libraries: Deno.dlopen(libnftables.so.1) works in a root of only them", async () => {
  const libs = await imageLibraries();
  const names = libs.map((l) => basename(l.path));
  for (
    const want of [
      NFTABLES_SONAME,
      "libnftnl.so.11",
      "libmnl.so.0",
      "libjansson.so.4",
      "libgmp.so.10",
      "libxtables.so.12",
      "libc.so.6",
    ]
  ) assert.ok(names.includes(want), `${want} missing from ${names.join(", ")}`);
  const root = await Deno.makeTempDir({ prefix: "aether-image-libs-" });
  const script = `const l = Deno.dlopen("${NFTABLES_SONAME}", {
    nft_ctx_new: { parameters: ["u32"], result: "pointer" },
    nft_ctx_free: { parameters: ["pointer"], result: "void" },
  });
  const ctx = l.symbols.nft_ctx_new(0);
  if (ctx === null) throw new Error("nft_ctx_new failed");
  l.symbols.nft_ctx_free(ctx);
  console.log("libnftables ok");`;
  const inRoot = async () => {
    // As a container runtime would: its own mount and pid namespaces with /proc mounted (Deno
    // reads /proc/self/maps), gone when the process ends.
    const o = await new Deno.Command("unshare", {
      args: [
        "--mount",
        "--pid",
        "--fork",
        `--mount-proc=${join(root, "proc")}`,
        "chroot",
        root,
        "/usr/local/bin/deno",
        "eval",
        "--no-config",
        script,
      ],
      env: {
        PATH: "/usr/sbin:/usr/bin:/sbin:/bin",
        DENO_DIR: "/tmp/deno",
        HOME: "/tmp",
        NO_COLOR: "1",
      },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    return { ok: o.success, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
  };
  try {
    const files = [...libs, { path: "/usr/local/bin/deno", source: Deno.execPath(), mode: 0o755 }];
    for (const f of files) {
      const to = join(root, f.path);
      await Deno.mkdir(dirname(to), { recursive: true });
      await Deno.copyFile(f.source!, to);
      await Deno.chmod(to, f.mode ?? 0o755);
    }
    for (const dir of ["tmp", "proc"]) await Deno.mkdir(join(root, dir));
    const ok = await inRoot();
    assert.ok(ok.ok && ok.out.includes("libnftables ok"), ok.out);
    for (const l of libs.filter((l) => /libnftables/.test(l.path))) {
      await Deno.remove(join(root, l.path));
    }
    const without = await inRoot();
    assert.ok(!without.ok && /libnftables/.test(without.out), without.out);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
