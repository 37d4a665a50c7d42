/**
 * The SPIRE registration entries aether wants (pure): one node alias entry for the cluster's
 * agents and one workload entry per Kubernetes ServiceAccount, and the plan that turns the
 * server's entries into those. aether owns exactly the entries whose `hint` is {@link OWNER_HINT};
 * any other entry is never changed or deleted.
 *
 * SPIRE refuses a second entry with the same SPIFFE ID, parent ID and selectors (BatchCreateEntry
 * answers ALREADY_EXISTS with the existing one), so a wanted entry that differs from one of ours
 * only in its other fields (TTL, admin, downstream) is updated in place, never deleted and
 * created again: create-then-delete would delete the only copy, delete-then-create would leave a
 * moment without the identity.
 * @module
 */

/** The `hint` that marks an entry as aether's. */
export const OWNER_HINT = "aether";

/** A registration entry's fields that aether sets and compares. */
export interface EntrySpec {
  /** `spiffe://<td>/<path>`. */
  spiffeId: string;
  /** `spiffe://<td>/<path>`. */
  parentId: string;
  /** `type:value`, sorted. */
  selectors: string[];
  /** Seconds; 0 = the server's default. */
  x509SvidTtl: number;
  admin: boolean;
  downstream: boolean;
  hint: string;
}

/** An entry as the server holds it. */
export interface ActualEntry extends EntrySpec {
  id: string;
}

/** A ServiceAccount, by namespace and name. */
export interface ServiceAccountRef {
  namespace: string;
  name: string;
}

/** Input of {@link desiredEntries}. */
export interface DesiredInput {
  /** e.g. `cluster.local` (no scheme). */
  trustDomain: string;
  /** The `k8s_psat` cluster name of the agents (their `k8s_psat:cluster:<name>` selector). */
  clusterName: string;
  /** X.509-SVID TTL of the workload entries, in seconds. */
  svidTtlSeconds: number;
  serviceAccounts: readonly ServiceAccountRef[];
  /** Namespaces whose ServiceAccounts get no entry. */
  excludeNamespaces?: readonly string[];
}

/** The SPIFFE ID of a ServiceAccount's workloads (aether's one identity per namespace + SA). */
export function serviceAccountId(td: string, namespace: string, name: string): string {
  return `spiffe://${td}/ns/${namespace}/sa/${name}`;
}

/**
 * The node alias all of the cluster's SPIRE agents resolve to (their `k8s_psat:cluster:<name>`
 * selector). Not under `/spire/`: SPIRE reserves that path and refuses it as an entry's SPIFFE ID.
 */
export function clusterAliasId(td: string, clusterName: string): string {
  return `spiffe://${td}/aether/cluster/${clusterName}`;
}

/** The SPIRE server's own ID, parent of node alias entries. */
export function serverId(td: string): string {
  return `spiffe://${td}/spire/server`;
}

const TRUST_DOMAIN = /^[a-z0-9._-]+$/;
const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** Throws when the trust domain or cluster name cannot form valid SPIFFE IDs. */
export function checkIdentityInput(trustDomain: string, clusterName: string): void {
  if (!TRUST_DOMAIN.test(trustDomain)) {
    throw new Error(`trust domain ${JSON.stringify(trustDomain)}: only a-z 0-9 . _ - allowed`);
  }
  if (!SEGMENT.test(clusterName) || clusterName === "." || clusterName === "..") {
    throw new Error(`cluster name ${JSON.stringify(clusterName)}: only A-Z a-z 0-9 . _ - allowed`);
  }
}

/**
 * The entries aether wants: the cluster's node alias, then one entry per ServiceAccount (outside
 * the excluded namespaces; duplicates once), sorted by SPIFFE ID, all hinted {@link OWNER_HINT}.
 */
export function desiredEntries(input: DesiredInput): EntrySpec[] {
  const { trustDomain: td, clusterName, svidTtlSeconds } = input;
  checkIdentityInput(td, clusterName);
  const alias = clusterAliasId(td, clusterName);
  const excluded = new Set(input.excludeNamespaces ?? []);
  const byId = new Map<string, EntrySpec>();
  for (const sa of input.serviceAccounts) {
    if (excluded.has(sa.namespace)) continue;
    const id = serviceAccountId(td, sa.namespace, sa.name);
    byId.set(id, {
      spiffeId: id,
      parentId: alias,
      selectors: [`k8s:ns:${sa.namespace}`, `k8s:sa:${sa.name}`].sort(),
      x509SvidTtl: svidTtlSeconds,
      admin: false,
      downstream: false,
      hint: OWNER_HINT,
    });
  }
  const workloads = [...byId.values()].sort((a, b) => compare(a.spiffeId, b.spiffeId));
  return [{
    spiffeId: alias,
    parentId: serverId(td),
    selectors: [`k8s_psat:cluster:${clusterName}`],
    x509SvidTtl: svidTtlSeconds,
    admin: false,
    downstream: false,
    hint: OWNER_HINT,
  }, ...workloads];
}

/** What to change on the server. */
export interface EntryPlan {
  /** Wanted entries none of ours provides. */
  create: EntrySpec[];
  /** Our entries to bring to the wanted fields (same id, SPIFFE ID, parent and selectors). */
  update: ActualEntry[];
  /** Our entries not wanted (gone ServiceAccounts, changed identities, duplicates). */
  delete: ActualEntry[];
  /**
   * Wanted entries that an entry not ours already provides (same SPIFFE ID, parent and
   * selectors): not created (the server would refuse), not touched; reported.
   */
  shadowed: EntrySpec[];
}

/** The identity of an entry as SPIRE's uniqueness rule sees it. */
function uniqueKey(e: EntrySpec): string {
  return `${e.spiffeId}\n${e.parentId}\n${[...e.selectors].sort().join("\n")}`;
}

/** Whether an entry already has the wanted fields besides its unique key. */
function sameFields(a: EntrySpec, b: EntrySpec): boolean {
  return a.x509SvidTtl === b.x509SvidTtl && a.admin === b.admin && a.downstream === b.downstream;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The changes that make the server's entries (`actual`) hold `desired`, touching only entries
 * hinted {@link OWNER_HINT}. Of several entries of ours with the same SPIFFE ID, parent and
 * selectors one is kept (one already right if any, else the lowest id) and the rest deleted.
 * Deterministic: every list is sorted (create and shadowed by SPIFFE ID, the others by id).
 */
export function planEntries(
  desired: readonly EntrySpec[],
  actual: readonly ActualEntry[],
): EntryPlan {
  const want = new Map<string, EntrySpec>();
  for (const d of desired) want.set(uniqueKey(d), d);
  const ours = new Map<string, ActualEntry[]>();
  const foreign = new Set<string>();
  for (const a of actual) {
    const key = uniqueKey(a);
    if (a.hint !== OWNER_HINT) {
      foreign.add(key);
      continue;
    }
    const group = ours.get(key);
    if (group) group.push(a);
    else ours.set(key, [a]);
  }
  const plan: EntryPlan = { create: [], update: [], delete: [], shadowed: [] };
  for (const [key, group] of ours) {
    group.sort((a, b) => compare(a.id, b.id));
    const d = want.get(key);
    if (!d) {
      plan.delete.push(...group);
      continue;
    }
    const keep = group.find((a) => sameFields(a, d)) ?? group[0];
    plan.delete.push(...group.filter((a) => a !== keep));
    if (!sameFields(keep, d)) plan.update.push({ ...d, id: keep.id });
  }
  for (const [key, d] of want) {
    if (ours.has(key)) continue;
    if (foreign.has(key)) plan.shadowed.push(d);
    else plan.create.push(d);
  }
  plan.create.sort((a, b) => compare(a.spiffeId, b.spiffeId));
  plan.shadowed.sort((a, b) => compare(a.spiffeId, b.spiffeId));
  plan.update.sort((a, b) => compare(a.id, b.id));
  plan.delete.sort((a, b) => compare(a.id, b.id));
  return plan;
}

/** Whether a plan changes nothing. */
export function planIsEmpty(p: EntryPlan): boolean {
  return p.create.length === 0 && p.update.length === 0 && p.delete.length === 0;
}
