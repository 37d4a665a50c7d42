/**
 * What a process pod runs (e2e/pod_runner.ts): an allowlist of container images, each mapped to a
 * local binary (nothing is pulled), and a container's command line and environment made from its
 * Pod — `args` passed to the image's binary, `env` values and the downward API's `fieldRef`s
 * (POD_NAME, NAMESPACE, SERVICE_ACCOUNT, …). Anything else is refused with a reason, never run
 * half-way. Pure but for {@link defaultImages} (which installs the peers).
 * @module
 */
import { ensurePeer } from "../testbed/peers/mod.ts";

/** The Gateway API conformance echo server (`echo-basic`), as tests name it in pod specs. */
export const ECHO_IMAGE = "gcr.io/k8s-staging-gateway-api/echo-basic:v1.5.1";
/** A pod that only holds its network namespace (a caller tests exec into). */
export const PAUSE_IMAGE = "registry.k8s.io/pause:3.10";
/** The port echo-basic answers HTTP on (its default `HTTP_PORT`). */
export const ECHO_HTTP_PORT = 3000;

/** How to run an image: its binary (the image's entrypoint). */
export interface ImageBinary {
  command: string;
  /** Environment every container of the image gets (the container's own wins). */
  env?: Record<string, string>;
}

/** Image repository (no tag or digest) → its binary. */
export type ImageAllowlist = ReadonlyMap<string, ImageBinary>;

/** The allowlist of the tests: echo-basic and pause, from the peers cache. */
export async function defaultImages(): Promise<ImageAllowlist> {
  return new Map([
    [imageRepository(ECHO_IMAGE), { command: await ensurePeer("echo-basic") }],
    [imageRepository(PAUSE_IMAGE), { command: await ensurePeer("pause") }],
  ]);
}

/** `registry/path/name` of an image reference, without `:tag` and `@digest`. */
export function imageRepository(image: string): string {
  const noDigest = image.split("@")[0];
  const colon = noDigest.lastIndexOf(":");
  return colon > noDigest.lastIndexOf("/") ? noDigest.slice(0, colon) : noDigest;
}

/** A container to start: its name, command line and whole environment. */
export interface ContainerRun {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

// deno-lint-ignore no-explicit-any
type Pod = any;

/** The downward API fields a `fieldRef` may name, read from the Pod. */
const FIELDS: Record<string, (p: Pod) => unknown> = {
  "metadata.name": (p) => p.metadata?.name,
  "metadata.namespace": (p) => p.metadata?.namespace,
  "metadata.uid": (p) => p.metadata?.uid,
  "spec.nodeName": (p) => p.spec?.nodeName,
  "spec.serviceAccountName": (p) => p.spec?.serviceAccountName ?? "default",
  "status.podIP": (p) => p.status?.podIP,
  "status.hostIP": (p) => p.status?.hostIP,
};

/**
 * The containers of `pod` as processes, or why the pod cannot run here (an image not on the
 * allowlist, a `command` override, an env source other than a value or a known fieldRef).
 */
export function containerRuns(pod: Pod, images: ImageAllowlist): ContainerRun[] | string {
  const runs: ContainerRun[] = [];
  for (const c of pod.spec?.containers ?? []) {
    const image = String(c.image ?? "");
    const binary = images.get(imageRepository(image));
    if (!binary) {
      return `image ${JSON.stringify(image)} of container ${c.name} is not on the allowlist ` +
        `(${[...images.keys()].join(", ")})`;
    }
    if (c.command?.length) {
      return `container ${c.name} sets command; only the image's own binary runs here`;
    }
    const env: Record<string, string> = { ...binary.env };
    for (const e of c.env ?? []) {
      if (e.value !== undefined || !e.valueFrom) {
        env[e.name] = String(e.value ?? "");
        continue;
      }
      const path = e.valueFrom.fieldRef?.fieldPath;
      const field = path === undefined ? undefined : FIELDS[path];
      const value = field?.(pod);
      if (value === undefined) {
        return `env ${e.name} of container ${c.name}: only values and the fieldRefs ` +
          `${Object.keys(FIELDS).join(", ")} are supported`;
      }
      env[e.name] = String(value);
    }
    runs.push({ name: c.name, command: binary.command, args: (c.args ?? []).map(String), env });
  }
  return runs.length ? runs : "the pod has no containers";
}
