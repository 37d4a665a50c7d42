/**
 * The upstream MCS conformance suite's request pod (`nicolaka/netshoot`: `nslookup`, `nc`) as a
 * process for a pod's network namespace; prints one JSON object.
 *
 * - `--name N --port P [--count C]`: `echo hi | nc N P` C times, each on its own: resolves N (A)
 *   through `--dns ip:port` as the pod's resolver would, connects to the first address, sends
 *   `hi`, reads until the server closes (4 s at most, as the suite's exec timeout). Prints
 *   `{outputs: string[]}` (an error's text in place of a failed attempt's output).
 * - `--address IP --port P`: the same to IP, without DNS.
 * - `--name N --type A|SRV`: the lookup. Prints `{addresses}` (A) or `{srv: [{port, target}]}`,
 *   or `{error}` (NXDOMAIN …).
 *
 * ip netns exec <ns> deno run -A e2e/mcs_nc.ts --dns 10.1.2.1:5353 --name hello.x.svc.clusterset.local --port 42
 * @module
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    name: { type: "string" },
    dns: { type: "string" },
    port: { type: "string" },
    count: { type: "string", default: "1" },
    type: { type: "string" },
    address: { type: "string" },
  },
});
const [dnsIp, dnsPort] = values.dns!.split(":");
const nameServer = { ipAddr: dnsIp, port: Number(dnsPort) };
const name = values.name!;

/** `echo hi | nc <name> <port>`: what the server wrote before it closed, or the error. */
async function nc(port: number): Promise<string> {
  try {
    const [address] = values.address
      ? [values.address]
      : await Deno.resolveDns(name, "A", { nameServer });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const conn = await Promise.race([
      Deno.connect({ hostname: address, port }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("connect timed out after 4 s")), 4000);
      }),
    ]).finally(() => clearTimeout(timer));
    const chunks: Uint8Array[] = [];
    timer = setTimeout(() => conn.close(), 4000);
    try {
      await conn.write(new TextEncoder().encode("hi\n")).catch(() => {});
      const buf = new Uint8Array(4096);
      while (true) {
        const n = await conn.read(buf).catch(() => null);
        if (n === null) break;
        chunks.push(buf.slice(0, n));
      }
    } finally {
      clearTimeout(timer);
      try {
        conn.close();
      } catch { /* closed by the timer or the peer */ }
    }
    return new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c])));
  } catch (e) {
    return `error ${(e as Error).name}: ${(e as Error).message}`;
  }
}

if (values.type === "A") {
  const addresses = await Deno.resolveDns(name, "A", { nameServer }).catch((e) => e as Error);
  console.log(JSON.stringify(
    addresses instanceof Error ? { error: addresses.name } : { addresses: addresses.sort() },
  ));
} else if (values.type === "SRV") {
  const srv = await Deno.resolveDns(name, "SRV", { nameServer }).catch((e) => e as Error);
  console.log(JSON.stringify(
    srv instanceof Error
      ? { error: srv.name }
      : { srv: srv.map((r) => ({ port: r.port, target: r.target.replace(/\.$/, "") })) },
  ));
} else {
  const outputs: string[] = [];
  for (let i = 0; i < Number(values.count); i++) outputs.push(await nc(Number(values.port)));
  console.log(JSON.stringify({ outputs }));
}
// A connect that timed out is still pending: end without waiting for it.
Deno.exit(0);
