/**
 * Capture table programming, per pod netns: the in-process FFI applier (agent/capture, one
 * libnftables context per netns) against a `nsenter --net=<netns> nft -j -f -` child per pod,
 * the same documents (lib/nft) in the same run, over `--pods` throwaway netns (root; peers `ip`
 * and `nft`). Per pod: the first full replace (FFI: including the context's setns sandwich),
 * a second full replace, a one-VIP set sync, and the read back (`list table`, parsed). The two
 * ways alternate pod by pod, `--rounds` times; each figure is the median over every pod and
 * round, in ms.
 *
 *   deno run -A bench/capture_apply.ts [--pods 20] [--vips 1000] [--rounds 3]
 *
 * Prints one JSON line.
 * @module
 */
import { parseArgs } from "node:util";
import { NftApplier } from "../agent/capture/mod.ts";
import {
  type CaptureSpec,
  deleteTable,
  parseTable,
  replaceTable,
  syncSets,
} from "../lib/nft/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    pods: { type: "string", default: "20" },
    vips: { type: "string", default: "1000" },
    rounds: { type: "string", default: "3" },
  },
});
const pods = Number(values.pods), vipCount = Number(values.vips), rounds = Number(values.rounds);
const ip = await ensurePeer("ip");
const nft = await ensurePeer("nft");

const spec: CaptureSpec = {
  vips: Array.from({ length: vipCount }, (_, i) => ({
    address: `10.96.${i >> 8}.${i & 255}`,
    port: 80 + (i % 3),
  })),
  capturePort: 15001,
  dns: { servers: ["10.96.0.53"], addresses: ["192.0.2.1"], port: 18054 },
};
const next: CaptureSpec = { ...spec, vips: [...spec.vips, { address: "10.97.0.1", port: 80 }] };

async function sh(cmd: string, args: string[], stdin?: string): Promise<string> {
  const child = new Deno.Command(cmd, {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const o = await child.output();
  if (!o.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(o.stderr)}`);
  }
  return new TextDecoder().decode(o.stdout);
}

const child = (path: string, doc: unknown) =>
  sh("nsenter", [`--net=${path}`, nft, "-j", "-f", "-"], JSON.stringify(doc));

const ms = async (fn: () => unknown | Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.floor(s.length / 2)] * 1000) / 1000;
};

const names = Array.from(
  { length: pods },
  (_, i) => `aether-bench-${i}-${crypto.randomUUID().slice(0, 6)}`,
);
const paths = names.map((n) => `/var/run/netns/${n}`);
const kinds = ["firstReplace", "replace", "sync", "read"] as const;
const ffi: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
const cli: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
try {
  for (const n of names) await sh(ip, ["netns", "add", n]);
  for (let r = 0; r < rounds; r++) {
    const applier = new NftApplier();
    try {
      for (const path of paths) {
        // Each way starts from no table.
        await child(path, deleteTable());
        ffi.firstReplace.push(await ms(() => applier.apply(path, spec)));
        ffi.replace.push(await ms(() => applier.apply(path, spec, { replace: true })));
        ffi.sync.push(await ms(() => applier.apply(path, next)));
        ffi.read.push(await ms(() => applier.read(path)));
        applier.apply(path, spec, { replace: true });

        await child(path, deleteTable());
        cli.firstReplace.push(await ms(() => child(path, replaceTable(spec))));
        cli.replace.push(await ms(() => child(path, replaceTable(spec))));
        cli.sync.push(await ms(() => child(path, syncSets(spec, next))));
        cli.read.push(
          await ms(async () =>
            parseTable(
              await sh("nsenter", [`--net=${path}`, nft, "-j", "list", "table", "inet", "aether"]),
            )
          ),
        );
      }
    } finally {
      applier.close();
    }
  }
} finally {
  for (const n of names) await sh(ip, ["netns", "del", n]).catch(() => {});
}
const out: Record<string, number> = { pods, vips: vipCount, rounds };
for (const k of kinds) {
  out[`ffi_${k}_ms`] = median(ffi[k]);
  out[`child_${k}_ms`] = median(cli[k]);
}
console.log(JSON.stringify(out));
