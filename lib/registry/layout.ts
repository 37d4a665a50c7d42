/**
 * Where things live in the registry: every key sits under one origin, `<region>/<cluster>`, and
 * only that origin's registrar writes there.
 *
 * ```
 * /aether/v1/<region>/<cluster>/alive                 the writer's claim, bound to its lease
 * /aether/v1/<region>/<cluster>/synced                written after the writer's first full sync
 * /aether/v1/<region>/<cluster>/exports/<ns>/<svc>    an exported Service
 * /aether/v1/<region>/<cluster>/eps/<ns>/<svc>/<pod>  one ready endpoint of it
 * /aether/v1/<region>/<cluster>/routes/<kind>/<ns>/<name>  a producer route of it
 * ```
 * @module
 */

/** The registry's root prefix. */
export const REGISTRY_PREFIX = "/aether/v1/";

/** A cluster in the clusterset: the one writer of its partition. */
export interface Origin {
  region: string;
  cluster: string;
}

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Why `origin` is not a usable origin, or undefined when it is (both parts RFC 1123 labels). */
export function originProblem(origin: Origin): string | undefined {
  for (const [what, v] of [["region", origin.region], ["cluster", origin.cluster]] as const) {
    if (!LABEL.test(v)) {
      return `registry ${what} "${v}" is not a DNS label (lower-case letters, digits and '-', ` +
        "at most 63, starting and ending with a letter or digit)";
    }
  }
  return undefined;
}

/** `<region>/<cluster>`: an origin's id and its partition's path. */
export function originId(origin: Origin): string {
  return `${origin.region}/${origin.cluster}`;
}

/** The MCS cluster id of an origin (KEP-1645 allows two labels): `<cluster>.<region>`. */
export function clusterId(origin: Origin): string {
  return `${origin.cluster}.${origin.region}`;
}

/** The prefix every key of `origin` sits under. */
export function originPrefix(origin: Origin, root = REGISTRY_PREFIX): string {
  return `${root}${originId(origin)}/`;
}

/** The key inside an origin's partition that holds the writer's claim. */
export const ALIVE = "alive";
/** The key inside an origin's partition written once its first full sync is in. */
export const SYNCED = "synced";

/** A key split into its origin and the rest (`exports/ns/svc`), or undefined when malformed. */
export function splitKey(
  key: string,
  root = REGISTRY_PREFIX,
): { origin: Origin; rel: string } | undefined {
  if (!key.startsWith(root)) return undefined;
  const parts = key.slice(root.length).split("/");
  if (parts.length < 3) return undefined;
  const origin = { region: parts[0], cluster: parts[1] };
  if (originProblem(origin)) return undefined;
  const rel = parts.slice(2).join("/");
  return rel === "" ? undefined : { origin, rel };
}

/** The key inside an origin of an exported Service. */
export function exportKey(namespace: string, name: string): string {
  return `exports/${namespace}/${name}`;
}

/** The key inside an origin of one endpoint (a pod) of an exported Service. */
export function endpointKey(namespace: string, service: string, pod: string): string {
  return `eps/${namespace}/${service}/${pod}`;
}

/** The key inside an origin of a producer route of an exported Service. */
export function routeKey(kind: string, namespace: string, name: string): string {
  return `routes/${kind}/${namespace}/${name}`;
}
