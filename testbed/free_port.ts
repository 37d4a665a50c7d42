/**
 * Free ports for tests and benchmarks. A port is chosen at random below the kernel's ephemeral
 * range (Linux: 32768–60999 by default) and checked by binding it: the kernel hands ephemeral
 * ports to outgoing connections too, so a port 0 listener's port, once released, can become the
 * source port of some process's connection (kube-apiserver opens many to etcd) before the peer
 * that was meant to listen there binds it ("address already in use").
 * @module
 */

const LOW = 20_000;
const SPAN = 12_000; // 20000–31999, below ip_local_port_range's default 32768

/** A TCP port that is free on `hostname` now and lies outside the ephemeral range. */
export function freePort(hostname = "127.0.0.1"): number {
  const pick = new Uint32Array(1);
  for (let attempt = 0; attempt < 100; attempt++) {
    crypto.getRandomValues(pick);
    const port = LOW + (pick[0] % SPAN);
    try {
      Deno.listen({ hostname, port }).close();
      return port;
    } catch (e) {
      if (!(e instanceof Deno.errors.AddrInUse)) throw e;
    }
  }
  const l = Deno.listen({ hostname, port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** `n` distinct free TCP ports (two {@link freePort} calls can draw the same one). */
export function freePorts(n: number, hostname = "127.0.0.1"): number[] {
  const out = new Set<number>();
  while (out.size < n) out.add(freePort(hostname));
  return [...out];
}
