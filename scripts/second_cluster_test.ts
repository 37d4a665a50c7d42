/**
 * The second cluster's lifecycle (`deno task cluster up --second`, scripts/second_cluster.ts) on
 * its own bridge and subnet (not the fixed ones, so a running second cluster is left alone): up
 * as a detached process, reused by a second `up`, an echo-basic pod created through its API server
 * answers from its kwok IP on the bridge, deleting it removes its netns, `down` leaves nothing.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer, run } from "../testbed/peers/mod.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import { ECHO_IMAGE } from "../e2e/pod_images.ts";
import { waitFor } from "../e2e/peers/proc.ts";
import { secondDown, secondLayout, secondStatus, secondUp } from "./second_cluster.ts";

Deno.test("second cluster: up, a process pod answers on its bridge, down leaves nothing", async () => {
  const root = await Deno.makeTempDir({ prefix: "aether-second-test-" });
  const ip = await ensurePeer("ip");
  const routes = await run(ip, ["-4", "route", "show", "table", "all"]);
  const free = [...Array(256).keys()].map((i) => `10.219.${i}`).filter((s) =>
    !routes.includes(`${s}.`)
  );
  const subnet = free[crypto.getRandomValues(new Uint8Array(1))[0] % free.length];
  const id = crypto.randomUUID().slice(0, 6);
  const l = secondLayout(join(root, "cluster"), {
    bridge: `a2t${id}`,
    podCidr: `${subnet}.0/24`,
    nodePodCidr: `${subnet}.128/25`,
    netnsPrefix: `a2t${id}`,
  });
  let client: KubeClient | undefined;
  try {
    const up = await secondUp(l);
    assertEquals((await secondUp(l)).server, up.server, "a second up reuses it");
    client = new KubeClient({ kubeconfig: up.kubeconfig });
    const c = client;
    const made = await c.request("POST", "/api/v1/namespaces/default/pods", {
      metadata: { name: "echo", namespace: "default" },
      spec: {
        containers: [{
          name: "echo",
          image: ECHO_IMAGE,
          env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
        }],
      },
    });
    assert(made.status === 201, JSON.stringify(made.json));
    const podIp = await waitFor("the pod's IP", async () => {
      const p = await c.get("/api/v1/namespaces/default/pods/echo");
      return p.status?.podIP as string | undefined;
    }, 180_000);
    assert(podIp.startsWith(`${subnet}.`) && Number(podIp.split(".")[3]) > 128, podIp);
    const body = await waitFor("echo answering on the bridge", async () => {
      const res = await fetch(`http://${podIp}:3000/`, { signal: AbortSignal.timeout(2000) });
      return res.status === 200 ? await res.json() : undefined;
    }, 180_000);
    assertEquals(body.pod, "echo");
    const netns = async () =>
      (await run(ip, ["netns", "list"])).split("\n").filter((n) => n.startsWith(l.netnsPrefix));
    assertEquals((await netns()).length, 1);
    const del = await c.request("DELETE", "/api/v1/namespaces/default/pods/echo");
    assert(del.status < 300, JSON.stringify(del.json));
    await waitFor(
      "the pod's netns removed",
      async () => (await netns()).length ? undefined : true,
      180_000,
    );
    c.close();
    client = undefined;
    await secondDown(l);
    assertEquals(await secondStatus(l), undefined);
    const links = await run(ip, ["-o", "link", "show"]);
    assert(!links.includes(`${l.bridge}:`), `bridge ${l.bridge} left`);
    const ps = await run("ps", ["-eo", "args"]);
    assert(!ps.includes(l.dir), "a process of the second cluster left");
    assertEquals(await Deno.stat(l.dir).then(() => true, () => false), false);
  } finally {
    client?.close();
    await secondDown(l);
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
