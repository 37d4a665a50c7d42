/**
 * "Is aether being uninstalled?", asked when the installer or the node agent is told to stop: an
 * upgrade or a restart must leave the CNI plugin and the pods' tables in place (new pods wait
 * for the next agent rather than start uncaptured), an uninstall must take them away (else every
 * new pod's ADD fails for good, and captured pods keep sending mesh traffic to a listener that is
 * gone). The answer is the agent's DaemonSet, asked of the API server:
 * - 200 with no `deletionTimestamp`: not uninstalling (a rollout replaces the pods, the
 *   DaemonSet stays);
 * - 200 with a `deletionTimestamp` (a foreground delete), or 404: uninstalling;
 * - 401 or 403: uninstalling too. `helm uninstall` deletes the DaemonSet, then its RoleBindings,
 *   Roles and ServiceAccounts, before the pods are stopped (the garbage collector stops them
 *   after the DaemonSet went), so by the time SIGTERM comes this pod's token is usually refused
 *   (its ServiceAccount gone: 401) or no longer allowed (its RoleBinding gone: 403). The chart's
 *   RBAC allows the `get` (e2e/helm_chart_test.ts), so these are not a misconfiguration;
 * - no answer (unreachable, no credentials, a timeout, any other status): not uninstalling, as
 *   `known: false`, which the caller logs as a warning.
 *
 * The in-cluster fetcher here is the pod's service account (token and CA files, re-read on each
 * call: the kubelet rotates the token) over Deno's fetch, and not lib/kube's KubeClient: the
 * installer imports no Kubernetes client code at all (the cni/ closure stays small). The agent,
 * which has a KubeClient anyway, passes its `request` instead.
 * @module
 */
import { join } from "node:path";

/** A DaemonSet, `<namespace>/<name>`. */
export interface DaemonSetRef {
  namespace: string;
  name: string;
}

/** What the API server answered (lib/kube's KubeResponse has this shape). */
export interface GetResponse {
  status: number;
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** A GET of an API path (rejects on network failures; HTTP errors resolve with their status). */
export type KubeGet = (path: string, signal: AbortSignal) => Promise<GetResponse>;

/** The answer: `known: false` when the API server could not tell (then never uninstalling). */
export interface UninstallVerdict {
  uninstalling: boolean;
  known: boolean;
  reason: string;
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** Parses `<namespace>/<name>`; throws on anything else. */
export function parseDaemonSetRef(text: string): DaemonSetRef {
  const [namespace, name, ...rest] = text.split("/");
  if (rest.length || !NAME.test(namespace ?? "") || !NAME.test(name ?? "")) {
    throw new Error(`want <namespace>/<daemonset>, not ${JSON.stringify(text)}`);
  }
  return { namespace, name };
}

/**
 * How long the installer and the node agent keep asking when the API server gives no answer:
 * half the chart's 30 s termination grace period, leaving the rest to remove what they installed.
 */
export const UNINSTALL_RETRY_MS = 15_000;

/** Options of {@link releaseUninstalling}. */
export interface UninstallCheckOptions {
  /** One question's timeout. Default 5000. */
  timeoutMs?: number;
  /**
   * Ask again (every `retryEveryMs`) while there is no answer, for this long: an API server
   * that was restarted just before `helm uninstall` may not answer the first question, and a
   * wrong "keep" leaves the plugin chained with no agent behind it. Default 0 (ask once).
   */
  retryForMs?: number;
  /** Default 1000. */
  retryEveryMs?: number;
  /** Injected clock and sleep (tests). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Asks the API server (through `get`) whether the DaemonSet `ref` is gone or going, again while
 * it gives no answer for up to `retryForMs`; the reason of an answer after retries says how many
 * questions it took.
 */
export async function releaseUninstalling(
  ref: DaemonSetRef,
  get: KubeGet,
  o: UninstallCheckOptions = {},
): Promise<UninstallVerdict> {
  const now = o.now ?? Date.now;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const until = now() + (o.retryForMs ?? 0);
  for (let asked = 1;; asked++) {
    const v = await askOnce(ref, get, o.timeoutMs ?? 5000);
    if (v.known || now() + (o.retryEveryMs ?? 1000) > until) {
      return asked === 1 ? v : { ...v, reason: `${v.reason} (after ${asked} questions)` };
    }
    await sleep(o.retryEveryMs ?? 1000);
  }
}

/** One question of {@link releaseUninstalling}. */
async function askOnce(
  ref: DaemonSetRef,
  get: KubeGet,
  timeoutMs: number,
): Promise<UninstallVerdict> {
  const ds = `daemonset ${ref.namespace}/${ref.name}`;
  const path = `/apis/apps/v1/namespaces/${ref.namespace}/daemonsets/${ref.name}`;
  let res: GetResponse;
  try {
    res = await get(path, AbortSignal.timeout(timeoutMs));
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { uninstalling: false, known: false, reason: `API server unreachable: ${why}` };
  }
  const yes = (reason: string) => ({ uninstalling: true, known: true, reason });
  switch (res.status) {
    case 200: {
      const at = res.json?.metadata?.deletionTimestamp;
      return at
        ? yes(`${ds} is being deleted (deletionTimestamp ${at})`)
        : { uninstalling: false, known: true, reason: `${ds} is in place` };
    }
    case 404:
      return yes(`${ds} is gone`);
    case 401:
      return yes(`this pod's token was refused (401): its ServiceAccount is gone`);
    case 403:
      return yes(`this pod may no longer read ${ds} (403): its RBAC is gone`);
    default: {
      const msg = typeof res.json === "object" ? res.json?.message : String(res.json);
      return {
        uninstalling: false,
        known: false,
        reason: `API server answered ${res.status}: ${String(msg).slice(0, 200)}`,
      };
    }
  }
}

/** Where {@link inClusterGet} finds the API server and the pod's credentials. */
export interface InClusterOptions {
  /** Default `$KUBERNETES_SERVICE_HOST`, `$KUBERNETES_SERVICE_PORT`. */
  host?: string;
  port?: string;
  /** Default the kubelet's mount, `/var/run/secrets/kubernetes.io/serviceaccount`. */
  dir?: string;
}

/** A {@link KubeGet} with the pod's service account: its token and CA, read on each call. */
export function inClusterGet(o: InClusterOptions = {}): KubeGet {
  return async (path, signal) => {
    const host = o.host ?? Deno.env.get("KUBERNETES_SERVICE_HOST");
    const port = o.port ?? Deno.env.get("KUBERNETES_SERVICE_PORT") ?? "443";
    if (!host) throw new Error("no KUBERNETES_SERVICE_HOST: not in a cluster");
    const dir = o.dir ?? "/var/run/secrets/kubernetes.io/serviceaccount";
    const [token, ca] = await Promise.all(
      ["token", "ca.crt"].map((f) => Deno.readTextFile(join(dir, f))),
    );
    const client = Deno.createHttpClient({ caCerts: [ca] });
    try {
      const res = await fetch(`https://${host.includes(":") ? `[${host}]` : host}:${port}${path}`, {
        client,
        signal,
        headers: { authorization: `Bearer ${token.trim()}`, accept: "application/json" },
      });
      const text = await res.text();
      let json: unknown = text;
      try {
        json = JSON.parse(text);
      } catch { /* not JSON */ }
      return { status: res.status, json };
    } finally {
      client.close();
    }
  };
}
