/**
 * Where the API server is and how to prove who we are: the pod's service account (in-cluster) or
 * a kubeconfig file. The server URL is known at once; the secrets (CA, client certificate and key,
 * bearer token) are read when asked, from files where the config names files, so a rotated token
 * or certificate is picked up (re-read at most every `refreshMs`).
 *
 * In-cluster and the plain kubeconfig fields (certificate-authority, client-certificate/-key and
 * their `-data` forms, token, tokenFile, username/password) are read here; a kubeconfig user with
 * an `exec` plugin or an `auth-provider` is handed to `@kubernetes/client-node`, loaded only then:
 * loading that library costs a process about 80 MiB of RSS (measured in docs/performance.md), the
 * biggest part of the controller's and every agent's memory when it was loaded always.
 * @module
 */
import { dirname, isAbsolute, join } from "node:path";
import { parse } from "yaml";

/** What a request to the API server carries. */
export interface Secrets {
  /** PEM CA bundle that signs the server's certificate (undefined: the system roots). */
  ca?: string;
  /** PEM client certificate and key (mutual TLS). */
  cert?: string;
  key?: string;
  /** Authorization and other headers. */
  headers: Record<string, string>;
}

/** An API server and the credentials to speak to it. */
export interface Credentials {
  /** The API server's URL, e.g. https://10.96.0.1:443. */
  readonly server: string;
  /** The current secrets. */
  secrets(): Promise<Secrets>;
}

/** Where a pod's service account is mounted. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

// deno-lint-ignore no-explicit-any
type Any = any;

/** Reads files, remembering each for `refreshMs` (certificates and tokens rotate). */
class FileReader {
  readonly #seen = new Map<string, { at: number; text: string }>();
  constructor(readonly refreshMs: number, readonly now: () => number) {}

  async read(path: string): Promise<string> {
    const seen = this.#seen.get(path);
    if (seen && this.now() - seen.at < this.refreshMs) return seen.text;
    const text = await Deno.readTextFile(path);
    this.#seen.set(path, { at: this.now(), text });
    return text;
  }
}

/** Options of the credential loaders. */
export interface CredentialOptions {
  /** How long a file read is reused (default 10 s). */
  refreshMs?: number;
  now?: () => number;
}

const reader = (o: CredentialOptions) => new FileReader(o.refreshMs ?? 10_000, o.now ?? Date.now);

/**
 * The pod's service account: `KUBERNETES_SERVICE_HOST` and `_PORT`, the token and CA files under
 * `dir`. Throws when the environment is not a pod's.
 */
export function inClusterCredentials(
  env: { get(name: string): string | undefined } = Deno.env,
  dir = SERVICE_ACCOUNT_DIR,
  opts: CredentialOptions = {},
): Credentials {
  const host = env.get("KUBERNETES_SERVICE_HOST"), port = env.get("KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    throw new Error(
      "--in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not in a " +
        "pod?); give --kubeconfig instead",
    );
  }
  const files = reader(opts);
  return {
    server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
    async secrets() {
      const token = (await files.read(join(dir, "token"))).trim();
      return { ca: await files.read(join(dir, "ca.crt")), headers: bearer(token) };
    },
  };
}

const bearer = (token: string): Record<string, string> =>
  token ? { authorization: `Bearer ${token}` } : {};

const named = (list: Any, name: string, what: string): Any => {
  const entry = (Array.isArray(list) ? list : []).find((e: Any) => e?.name === name);
  if (!entry) throw new Error(`the kubeconfig has no ${what} named "${name}"`);
  return entry;
};

/**
 * The credentials a kubeconfig file names (its `current-context`, or `context`). Throws with what
 * is missing when the file or its context is unusable.
 */
export function kubeconfigCredentials(
  file: string,
  context?: string,
  opts: CredentialOptions = {},
): Credentials {
  let doc: Any;
  try {
    doc = parse(Deno.readTextFileSync(file));
  } catch (e) {
    throw new Error(`kubeconfig ${file}: ${(e as Error).message}`);
  }
  const ctxName = context ?? doc?.["current-context"];
  if (!ctxName) {
    throw new Error("the kubeconfig names no current cluster; set current-context or --context");
  }
  const ctx = named(doc.contexts, ctxName, "context").context ?? {};
  const cluster = named(doc.clusters, ctx.cluster, "cluster").cluster ?? {};
  const user = ctx.user ? named(doc.users, ctx.user, "user").user ?? {} : {};
  if (typeof cluster.server !== "string" || !cluster.server) {
    throw new Error(`kubeconfig ${file}: cluster "${ctx.cluster}" has no server`);
  }
  if (cluster["insecure-skip-tls-verify"] === true) {
    throw new Error(
      `kubeconfig ${file}: insecure-skip-tls-verify is not supported; give the cluster's ` +
        "certificate-authority instead",
    );
  }
  if (user.exec || user["auth-provider"]) return libraryCredentials(file, ctxName, cluster.server);
  const base = dirname(file);
  const files = reader(opts);
  // Inline data is the file's: decoded once. Named files are read (and re-read) when asked.
  const inline = (data: unknown) =>
    typeof data === "string" && data ? new TextDecoder().decode(decodeBase64(data)) : undefined;
  const data = {
    ca: inline(cluster["certificate-authority-data"]),
    cert: inline(user["client-certificate-data"]),
    key: inline(user["client-key-data"]),
  };
  const pem = async (path: unknown, decoded: string | undefined) => {
    if (decoded !== undefined) return decoded;
    if (typeof path === "string" && path) {
      return await files.read(isAbsolute(path) ? path : join(base, path));
    }
    return undefined;
  };
  return {
    server: cluster.server,
    async secrets() {
      const headers: Record<string, string> = {};
      if (typeof user.token === "string" && user.token) Object.assign(headers, bearer(user.token));
      else if (typeof user.tokenFile === "string" && user.tokenFile) {
        const path = isAbsolute(user.tokenFile) ? user.tokenFile : join(base, user.tokenFile);
        Object.assign(headers, bearer((await files.read(path)).trim()));
      } else if (typeof user.username === "string") {
        headers.authorization = `Basic ${btoa(`${user.username}:${user.password ?? ""}`)}`;
      }
      return {
        ca: await pem(cluster["certificate-authority"], data.ca),
        cert: await pem(user["client-certificate"], data.cert),
        key: await pem(user["client-key"], data.key),
        headers,
      };
    },
  };
}

function decodeBase64(text: string): Uint8Array {
  const bin = atob(text.replace(/\s+/g, ""));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

const text = (v: unknown): string | undefined =>
  v === undefined || v === null
    ? undefined
    : typeof v === "string"
    ? v
    : new TextDecoder().decode(v as Uint8Array);

/**
 * A kubeconfig user with an exec plugin or an auth-provider: `@kubernetes/client-node` resolves
 * it (running the plugin, refreshing its token), loaded on first use.
 */
function libraryCredentials(file: string, context: string, server: string): Credentials {
  let config: Promise<Any> | undefined;
  const load = async () => {
    const { KubeConfig } = await import("@kubernetes/client-node");
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    kc.setCurrentContext(context);
    return kc;
  };
  return {
    server,
    async secrets() {
      const kc = await (config ??= load().catch((e) => {
        config = undefined;
        throw e;
      }));
      const opts: Any = {};
      await kc.applyToHTTPSOptions(opts);
      const headers: Record<string, string> = Object.fromEntries(
        Object.entries(opts.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]),
      );
      if (opts.auth) headers.authorization = `Basic ${btoa(opts.auth)}`;
      return { ca: text(opts.ca), cert: text(opts.cert), key: text(opts.key), headers };
    },
  };
}
