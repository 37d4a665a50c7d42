/**
 * A real etcd for tests (Debian's etcd-server): one member on ephemeral 127.0.0.1 ports, data in
 * a folder of the test's own, stoppable and startable again on the same ports and data.
 * @module
 */
import { join } from "node:path";
import { freePorts } from "../../testbed/free_port.ts";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { type Proc, spawn, waitFor } from "./proc.ts";

/** A running (or stopped) etcd member. */
export interface Etcd {
  /** The client URL (the v3 JSON gateway answers there). */
  url: string;
  /** The process while it runs. */
  proc(): Proc | undefined;
  /** Stops etcd (SIGTERM); the data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and data and waits until it is healthy. */
  start(): Promise<void>;
}

/**
 * Starts etcd with its data in `dir` and waits until /health says true. Clients are served on
 * `host` (default loopback; e.g. the host's address towards a cluster's node for its pods).
 */
export async function startEtcd(dir: string, name = "test", host = "127.0.0.1"): Promise<Etcd> {
  const bin = await ensurePeer("etcd");
  const [clientPort, peerPort] = freePorts(2);
  const url = `http://${host}:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  let proc: Proc | undefined;
  const start = async () => {
    proc = spawn("etcd", bin, [
      `--name=${name}`,
      `--data-dir=${join(dir, "etcd")}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=${name}=${peerUrl}`,
      "--unsafe-no-fsync",
    ]);
    const running = proc;
    await waitFor(
      "etcd healthy",
      async () => {
        const res = await fetch(`${url}/health`);
        const body = await res.json();
        return body.health === "true" ? true : undefined;
      },
      30_000,
      [running],
    );
  };
  await start();
  return {
    url,
    proc: () => proc,
    stop: async () => {
      await proc?.stop();
      proc = undefined;
    },
    start,
  };
}
