/**
 * The pod runner's side of a kubelet's status reports (e2e/pod_runner.ts): which ports say a
 * process pod is ready, and the status merge patch that makes it Ready or not (its `Ready` and
 * `ContainersReady` conditions, each container's `ready`, an exited container's terminated state).
 * Pure.
 * @module
 */

// deno-lint-ignore no-explicit-any
type Pod = any;

/** The TCP ports the pod's containers declare (`ports[].containerPort`): ready once they listen. */
export function readinessPorts(pod: Pod): number[] {
  const ports = new Set<number>();
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if ((p.protocol ?? "TCP") === "TCP" && Number.isInteger(p.containerPort)) {
        ports.add(p.containerPort);
      }
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** A container that ended. */
export interface Exited {
  name: string;
  code: number;
}

/**
 * The `/status` merge patch that makes `pod` Ready (`ready`) or not (with `reason`), keeping its
 * other conditions; `exited` marks that container terminated with its exit code.
 */
export function readinessPatch(
  pod: Pod,
  ready: boolean,
  now: string,
  reason = "ContainersNotReady",
  exited?: Exited,
): { status: Record<string, unknown> } {
  const status = ready ? "True" : "False";
  const conditions = (pod.status?.conditions ?? [])
    .filter((c: { type: string }) => c.type !== "Ready" && c.type !== "ContainersReady")
    .concat(
      ["ContainersReady", "Ready"].map((type) => ({
        type,
        status,
        lastTransitionTime: now,
        ...(ready ? {} : { reason }),
      })),
    );
  const containerStatuses = (pod.spec?.containers ?? []).map((c: Pod) => {
    const old = (pod.status?.containerStatuses ?? []).find((s: Pod) => s.name === c.name) ?? {};
    const state = exited && exited.name === c.name
      ? { terminated: { exitCode: exited.code, finishedAt: now, reason: "Error" } }
      : old.state ?? { running: { startedAt: now } };
    return {
      ...old,
      name: c.name,
      image: c.image,
      ready: ready && !state.terminated,
      restartCount: 0,
      started: !state.terminated,
      state,
    };
  });
  return { status: { conditions, containerStatuses } };
}
