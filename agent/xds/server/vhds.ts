/**
 * VHDS (virtual host discovery) naming, as Envoy 1.40 implements it (`source/common/router/vhds.cc`,
 * `rds_impl.cc`): a RouteConfiguration with `vhds` set subscribes on the VirtualHost type with
 * its own name, matched as a *namespace* (every resource named `<route config>/<anything>`
 * belongs to it); a request whose Host matches no route makes the on-demand filter subscribe to
 * the alias `<route config>/<host>` (Host lowercased, port kept). Envoy keys VHDS virtual hosts by
 * their `name` and removes them by resource name, so a resource's name must equal its vhost
 * `name`. Envoy resumes the paused request once a response lists the alias, either as `aliases`
 * of the resource that serves the host, or as an empty resource (no `resource`) named by the alias:
 * "not found", and the request continues to the router's 404.
 * @module
 */
import type { EncodedResource, Snapshot } from "../cache/mod.ts";
import { TypeUrl } from "../proto.ts";

/** What a set of VHDS subscription names selects from a snapshot's virtual hosts. */
export interface VhdsSelection {
  /** Resources selected by name, by namespace or by alias, in name order. */
  selected: EncodedResource[];
  /**
   * Per selected resource name, the subscribed `<rc>/<host>` names it answers: its own name or
   * aliases (those are sent as `aliases`).
   */
  answers: Map<string, string[]>;
  /** Subscribed aliases (`<rc>/<host>`) that no resource serves. */
  unresolved: string[];
}

/** The namespace of a VHDS name: everything before its last `/` ("" when there is none). */
export function vhdsNamespace(name: string): string {
  const i = name.lastIndexOf("/");
  return i < 0 ? "" : name.slice(0, i);
}

/**
 * Alias (`<namespace>/<domain>`, lowercased) → resource name, for every exact domain. Callers
 * with a snapshot take it once per snapshot through {@link vhdsAliases}.
 */
export function vhdsAliasIndex(items: ReadonlyMap<string, EncodedResource>): Map<string, string> {
  const index = new Map<string, string>();
  for (const r of items.values()) {
    const ns = vhdsNamespace(r.name);
    for (const d of (r.resource.domains ?? []) as string[]) {
      if (!d.includes("*")) index.set(`${ns}/${d.toLowerCase()}`, r.name);
    }
  }
  return index;
}

/** The VHDS alias index of a snapshot, made once per (immutable) snapshot. */
export function vhdsAliases(snapshot: Snapshot): Map<string, string> {
  return snapshot.derive(
    "vhdsAliases",
    (s) => vhdsAliasIndex(s.resources(TypeUrl.virtualHost).items),
  );
}

/**
 * Resolves VHDS subscription names against a snapshot's virtual hosts: a wildcard selects them
 * all (Envoy 1.40 opens VHDS with an empty, i.e. legacy wildcard, subscription), or with `open`
 * those of the route configurations in it (see {@link openNamespaces}); a name without
 * `/` is a route configuration (namespace) and selects all of its virtual hosts; any other name
 * selects the resource of that name, else the resource one of whose domains it spells.
 */
export function vhdsSelect(
  items: ReadonlyMap<string, EncodedResource>,
  names: ReadonlySet<string>,
  wildcard = false,
  open?: ReadonlySet<string>,
  aliases?: () => ReadonlyMap<string, string>,
): VhdsSelection {
  const picked = new Map<string, EncodedResource>();
  const answers = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const r of items.values()) {
    const ns = vhdsNamespace(r.name);
    if ((wildcard && (!open || open.has(ns))) || names.has(r.name) || names.has(ns)) {
      picked.set(r.name, r);
    }
  }
  // Built (or taken from the snapshot) only when a name is not a resource name.
  let index: ReadonlyMap<string, string> | undefined;
  for (const n of names) {
    if (!n.includes("/")) continue;
    const target = items.has(n)
      ? n
      : (index ??= aliases?.() ?? vhdsAliasIndex(items)).get(n.toLowerCase());
    if (!target) {
      unresolved.push(n);
      continue;
    }
    picked.set(target, items.get(target)!);
    answers.set(target, [...(answers.get(target) ?? []), n].sort());
  }
  const selected = [...picked.values()].sort((a, b) => a.name < b.name ? -1 : 1);
  return { selected, answers, unresolved: unresolved.sort() };
}

/**
 * The route configurations whose VHDS the client listens to: those with `vhds` set that it has
 * ACKed over RDS. Envoy creates a route configuration's VHDS watch while it applies the RDS
 * response (before the ACK), and drops virtual hosts of a namespace nobody watches, so a
 * wildcard VHDS stream sends a namespace's vhosts only from then on.
 */
export function openNamespaces(
  routes: ReadonlyMap<string, EncodedResource>,
  acked: ReadonlyMap<string, string>,
): Set<string> {
  const out = new Set<string>();
  for (const [name, hash] of acked) {
    const r = routes.get(name);
    if (r?.hash === hash && r.resource.vhds) out.add(name);
  }
  return out;
}
