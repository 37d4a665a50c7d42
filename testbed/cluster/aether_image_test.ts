import assert from "node:assert/strict";
import { basename, dirname, join } from "node:path";
import { imageLibraries, lddPathOf, NFTABLES_SONAME, parseLdd } from "./aether_image.ts";
import { relocateEmits } from "./aether_image.ts";
import { exists } from "../peers/mod.ts";

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

/**
 * Real Deno: what `deno install` emitted for sources staged in one folder serves the same
 * sources run from another once relocated — `deno run --cached-only` there writes no emit of its
 * own and leaves the relocated one untouched. Without the relocation it emits anew (checked too,
 * so the test cannot pass by Deno not caching at all).
 */
Deno.test("relocateEmits: the staged emit serves the sources where they run", async () => {
  const tmp = await Deno.realPath(await Deno.makeTempDir({ prefix: "aether-emit-" }));
  try {
    const stage = join(tmp, "stage", "app"), runs = join(tmp, "app"), denoDir = join(tmp, "dd");
    const sources: Record<string, string> = {
      "main.ts": 'import { y } from "./lib/y.ts";\nconst x: number = y + 1;\nconsole.log(x);\n',
      "lib/y.ts": "export const y: number = 41;\n",
    };
    for (const dir of [stage, runs]) {
      for (const [path, text] of Object.entries(sources)) {
        await Deno.mkdir(dirname(join(dir, path)), { recursive: true });
        await Deno.writeTextFile(join(dir, path), text);
      }
    }
    const deno = (args: string[], cwd: string) =>
      new Deno.Command(Deno.execPath(), { args, cwd, env: { DENO_DIR: denoDir } }).output();
    const emits = async () => {
      const out: string[] = [];
      const walk = async (dir: string): Promise<void> => {
        for await (const e of Deno.readDir(dir)) {
          if (e.isDirectory) await walk(join(dir, e.name));
          else out.push(`${join(dir, e.name)}@${(await Deno.stat(join(dir, e.name))).mtime}`);
        }
      };
      await walk(join(denoDir, "gen")).catch(() => {});
      return out.sort();
    };
    assert.ok((await deno(["install", "--quiet", "--entrypoint", "main.ts"], stage)).success);
    assert.ok((await emits()).some((e) => e.includes(`${stage}/lib/y.ts.js`)), "emitted staged");

    await relocateEmits(denoDir, stage, runs);
    const relocated = await emits();
    assert.deepEqual(relocated.map((e) => e.replace(/@.*/, "")).sort(), [
      join(denoDir, "gen", "file", runs, "lib", "y.ts.js"),
      join(denoDir, "gen", "file", runs, "main.ts.js"),
    ]);
    assert.ok(!(await exists(join(denoDir, "gen", "file", tmp, "stage"))), "staging folders gone");
    await new Promise((r) => setTimeout(r, 20)); // a rewrite would show in the mtime
    const ran = await deno(["run", "--cached-only", "main.ts"], runs);
    assert.equal(new TextDecoder().decode(ran.stdout).trim(), "42");
    assert.deepEqual(await emits(), relocated, "no emit of its own, the relocated one untouched");

    await Deno.remove(join(denoDir, "gen"), { recursive: true });
    assert.ok((await deno(["run", "--cached-only", "main.ts"], runs)).success);
    assert.equal((await emits()).length, 2, "without the relocated emit Deno emits itself");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
