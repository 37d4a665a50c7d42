/**
 * The controller as users start it (`controller/main.ts`, its own process) against a real
 * kube-apiserver with the Gateway API CRDs: `/metrics` carries its process gauges (resident
 * memory, CPU seconds, V8 heap) beside its own series, `/readyz` turns ready; and a bad
 * clusterset flag stops it at once with a message naming the flag.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { installCrds, startKube } from "./peers/kube.ts";
import { freePort, waitFor } from "./peers/proc.ts";

const main = new URL("../controller/main.ts", import.meta.url).pathname;

/** The value of an unlabelled series in Prometheus text, or undefined. */
const series = (text: string, name: string) => {
  const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
};

Deno.test("controller process: process gauges on /metrics, ready; a bad flag names itself", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-controller-proc-" });
  const kube = await startKube(dir);
  let child: Deno.ChildProcess | undefined;
  try {
    await installCrds(kube, join(await ensurePeer("gateway-api-crds"), "standard"));
    const admin = `127.0.0.1:${freePort()}`;
    child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", main, "--kubeconfig", kube.kubeconfig, "--admin-address", admin],
      stdout: "null",
      stderr: "null",
    }).spawn();
    const text = await waitFor("the controller's /metrics with its process gauges", async () => {
      const res = await fetch(`http://${admin}/metrics`).catch(() => undefined);
      const body = await res?.text();
      return body && series(body, "process_resident_memory_bytes") !== undefined ? body : undefined;
    });
    assert.ok(series(text, "process_resident_memory_bytes")! > 16 * 2 ** 20, "RSS over 16 MiB");
    assert.ok(series(text, "deno_heap_used_bytes")! > 2 ** 20, "V8 heap over 1 MiB");
    assert.ok(series(text, "process_cpu_seconds_total")! > 0, "some CPU time");
    await waitFor("the controller ready", async () => {
      const res = await fetch(`http://${admin}/readyz`).catch(() => undefined);
      await res?.body?.cancel();
      return res?.status === 200 ? true : undefined;
    });

    const bad = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        main,
        "--kubeconfig",
        kube.kubeconfig,
        "--admin-address",
        `127.0.0.1:${freePort()}`,
        "--east-west-gateway",
        "10.0.0.7:15443",
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(bad.code, 1);
    assert.match(
      new TextDecoder().decode(bad.stderr),
      /^controller: --east-west-gateway needs --registry-url/m,
    );
  } finally {
    try {
      child?.kill("SIGTERM");
    } catch { /* exited */ }
    await child?.status;
    await kube.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
