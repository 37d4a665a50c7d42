/**
 * The pod runner (e2e/pod_runner.ts) on a real control plane with a kwok node
 * (e2e/peers/kwok_cluster.ts): a pod runs as a process in a netns at exactly the IP kwok gave it,
 * with its resolv.conf, after aether's CNI plugin (a failed sandbox — no agent on the socket yet —
 * is an Event and is tried again), and is Ready once its containerPort listens (a port that never
 * does: never Ready); a container that exits (then not Ready) and an image off the allowlist each
 * give a Warning Event with the reason, and the runner goes on; a deleted pod's netns and
 * resolv.conf go.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { Logger } from "../lib/log/mod.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import { createPodNetwork, type PodNetwork } from "./netns.ts";
import { type KwokCluster, startKwokCluster } from "./peers/kwok_cluster.ts";
import { waitFor as wait } from "./peers/proc.ts";
import { PodRunner } from "./pod_runner.ts";
import { ECHO_IMAGE } from "./pod_images.ts";
import { type CniCapture, cniCapture } from "../agent/capture/mod.ts";

const pod = (name: string, image: string, ports: number[] = []) => ({
  metadata: { name, namespace: "default" },
  spec: {
    containers: [{ name: "main", image, ports: ports.map((containerPort) => ({ containerPort })) }],
  },
});

/** Generous: the parallel group runs hundreds of tests beside this one on two cores. */
const waitFor = <T>(what: string, fn: () => Promise<T | undefined>) => wait(what, fn, 180_000);

// deno-lint-ignore no-explicit-any
const condition = (p: any, type: string) =>
  (p.status?.conditions ?? []).find((c: { type: string }) => c.type === type);

Deno.test("pod runner: kwok's pods as processes at their IPs; bad pods get Events", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-pod-runner-" });
  let net: PodNetwork | undefined, kwok: KwokCluster | undefined;
  let client: KubeClient | undefined, runner: PodRunner | undefined;
  let cni: CniCapture | undefined;
  const logs: string[] = [];
  try {
    net = await createPodNetwork();
    await net.up();
    kwok = await startKwokCluster(join(dir, "kube"), { podCidr: net.staticRange, crds: false });
    client = new KubeClient({ kubeconfig: kwok.kube.kubeconfig });
    const c = client;
    runner = new PodRunner({
      client: c,
      nodeName: kwok.nodeName,
      net,
      images: new Map([
        ["gcr.io/k8s-staging-gateway-api/echo-basic", { command: await ensurePeer("echo-basic") }],
        ["example.test/exits", { command: "/bin/false" }],
        ["example.test/mute", { command: await ensurePeer("pause") }],
      ]),
      clusterDns: "10.96.0.10",
      // aether's CNI plugin chained after the bridge; nothing answers on the socket at first.
      cniSocket: join(dir, "cni.sock"),
      logger: new Logger("pods", (l) => logs.push(l), "info"),
    });
    await runner.start();
    const r = runner;
    const events = async (name: string) => {
      const res = await c.get(
        `/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D${name}`,
      );
      return (res.items ?? []) as { reason: string; type: string; message: string }[];
    };

    await kwok.create("/api/v1/namespaces/default/pods", pod("echo", ECHO_IMAGE, [3000]));
    // No node agent on the CNI socket: a sandbox failure, an Event, tried again after a back-off.
    const sandbox = await waitFor("the sandbox failure's Event", async () => {
      return (await events("echo")).find((e) => e.reason === "FailedCreatePodSandBox");
    });
    assert(sandbox.message.includes("aether-cni ADD default/echo"), sandbox.message);
    assertEquals(r.pod("default", "echo"), undefined);
    // The agent's CNI server comes (capture taken as done at once): the retry goes through.
    cni = cniCapture({
      stateDir: join(dir, "agent"),
      socketPath: join(dir, "cni.sock"),
      captured: () => Promise.resolve(),
      logger: new Logger("cni", (l) => logs.push(l), "info"),
    });
    await cni.server.start();
    const running = await waitFor("echo running", () => Promise.resolve(r.pod("default", "echo")));
    // Ready is the runner's: once its containerPort listens (kwok makes it Running, not Ready).
    const status = await waitFor("echo Ready in the API server", async () => {
      const p = await c.get("/api/v1/namespaces/default/pods/echo");
      return condition(p, "Ready")?.status === "True" ? p : undefined;
    });
    assertEquals(running.ip, status.status.podIP, "the netns has kwok's IP");
    assertEquals(status.status.containerStatuses[0].ready, true);
    const answer = await waitFor("echo answering at its IP", async () => {
      const res = await fetch(`http://${running.ip}:3000/`, { signal: AbortSignal.timeout(2000) });
      return res.status === 200 ? await res.json() : undefined;
    });
    assertEquals(answer.namespace, "", "no env asked for, none given");
    const resolv = await Deno.readTextFile(`/etc/netns/${running.netns.netns}/resolv.conf`);
    assert(resolv.startsWith("nameserver 10.96.0.10\n"), resolv);

    await kwok.create("/api/v1/namespaces/default/pods", pod("exits", "example.test/exits:1"));
    const exited = await waitFor("the exit's Event", async () => {
      return (await events("exits")).find((e) => e.reason === "ContainerExited");
    });
    assertEquals(exited.type, "Warning");
    assert(exited.message.startsWith("container main exited with code 1"), exited.message);
    const down = await waitFor("the exited pod not Ready", async () => {
      const p = await c.get("/api/v1/namespaces/default/pods/exits");
      const ready = condition(p, "Ready");
      return ready?.status === "False" && ready.reason === "ContainerExited" ? p : undefined;
    });
    assertEquals(down.status.containerStatuses[0].state.terminated.exitCode, 1);

    // A port that never listens: Running, never Ready.
    await kwok.create("/api/v1/namespaces/default/pods", pod("mute", "example.test/mute:1", [9]));
    const mute = await waitFor("mute running", () => Promise.resolve(r.pod("default", "mute")));
    assertEquals(mute.ready, false);
    const muteStatus = await c.get("/api/v1/namespaces/default/pods/mute");
    assertEquals(condition(muteStatus, "Ready")?.status, "False");

    await kwok.create("/api/v1/namespaces/default/pods", pod("nginx", "nginx:1"));
    const refused = await waitFor("the refusal's Event", async () => {
      return (await events("nginx")).find((e) => e.reason === "Failed");
    });
    assert(refused.message.includes("not on the allowlist"), refused.message);
    assertEquals(r.pod("default", "nginx"), undefined);

    const del = await c.request("DELETE", "/api/v1/namespaces/default/pods/echo");
    assert(del.status < 300, JSON.stringify(del.json));
    const ip = await ensurePeer("ip");
    await waitFor("echo's netns and resolv.conf removed", async () => {
      const list = await new Deno.Command(ip, { args: ["netns", "list"] }).output();
      const netns = new TextDecoder().decode(list.stdout).includes(running.netns.netns);
      const resolv = await Deno.stat(`/etc/netns/${running.netns.netns}`).then(() => 1, () => 0);
      return !netns && !resolv && !r.pod("default", "echo") ? true : undefined;
    });
    assert(r.pod("default", "exits"), "a pod whose container exited stays (not restarted)");
  } catch (e) {
    console.error(logs.slice(-40).join("\n"));
    throw e;
  } finally {
    await runner?.stop();
    await cni?.close();
    client?.close();
    await kwok?.stop();
    await net?.remove();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
