/**
 * Keeps the webhook's TLS current in the cluster: one `sync()` reads the Secret and the
 * MutatingWebhookConfiguration, takes the certificate lifecycle's next step (certs.ts) and writes
 * it back, sets every webhook's `caBundle` to the Secret's bundle, and hands the certificate to
 * serve to `onCert` when it changed. Every controller replica runs it (each serves the webhook);
 * the Secret is written with its resourceVersion, so of two replicas taking the same step one
 * wins and the other reads the winner's result (a conflict, then a fresh read).
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import { errorOf, type KubeClient } from "../../lib/kube/mod.ts";
import {
  applyStep,
  type CertPlan,
  type CertPolicy,
  DEFAULT_CERT_POLICY,
  planCerts,
  type WebhookTls,
} from "./certs.ts";
import { type CertAndKey, describePem, samePem, sanNames } from "./x509.ts";

/** Where the TLS lives and what it is for. */
export interface CertKeeperOptions {
  client: KubeClient;
  /** Namespace of the Secret (the controller's own). */
  namespace: string;
  secretName: string;
  /** The MutatingWebhookConfiguration whose caBundle is kept current. */
  configName: string;
  /** Names the API server dials: `<service>.<namespace>.svc` and its longer forms. */
  dnsNames: readonly string[];
  /** IP addresses in the certificate (a URL-configured webhook dialled by address). */
  ipAddresses?: readonly string[];
  policy?: CertPolicy;
  /** Milliseconds clock that decides validity and renewal. */
  now: () => number;
  logger: Logger;
  /** Called with the certificate to serve, first and whenever it changes. */
  onCert: (cert: CertAndKey) => void;
  /** Called once per step taken (metrics). */
  onStep?: (plan: CertPlan) => void;
}

const SECRET_KEYS: Record<keyof WebhookTls, string> = {
  caPem: "ca.crt",
  certPem: "tls.crt",
  keyPem: "tls.key",
  nextCertPem: "next.crt",
  nextKeyPem: "next.key",
};

const b64 = (s: string) => btoa(s);
const unb64 = (s: string) => atob(s);

interface SecretRead {
  tls?: WebhookTls;
  resourceVersion?: string;
}

/** The webhook entries of a MutatingWebhookConfiguration, with their caBundle decoded. */
interface ConfigRead {
  webhooks: { name: string; caPem: string }[];
}

/** Syncs the webhook's TLS with the Secret and the MutatingWebhookConfiguration. */
export class CertKeeper {
  readonly #o: CertKeeperOptions;
  #served?: string;

  constructor(opts: CertKeeperOptions) {
    this.#o = opts;
  }

  get #secretPath(): string {
    return `/api/v1/namespaces/${this.#o.namespace}/secrets/${this.#o.secretName}`;
  }

  get #configPath(): string {
    return `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${this.#o.configName}`;
  }

  /**
   * One round (see the module doc): at most one lifecycle step; returns the TLS in force. Throws
   * on an API error (the caller logs it and tries again later).
   */
  async sync(): Promise<WebhookTls> {
    const o = this.#o;
    const policy = o.policy ?? DEFAULT_CERT_POLICY;
    const names = { dnsNames: o.dnsNames, ipAddresses: o.ipAddresses };
    for (let attempt = 1; attempt <= 5; attempt++) { // more rounds only after a write conflict
      const [secret, config] = await Promise.all([this.#readSecret(), this.#readConfig()]);
      const now = o.now();
      const plan = planCerts({
        tls: secret.tls,
        now,
        names: sanNames(o.dnsNames, o.ipAddresses),
        published: config ? published(config) : undefined,
      }, policy);
      let tls = secret.tls;
      if (plan.step !== "keep" || !tls) {
        const next = await applyStep(plan.step, tls, names, now, policy);
        if (!await this.#writeSecret(next, secret.resourceVersion)) continue; // another replica
        o.logger.info("webhook certificate", { step: plan.step, reason: plan.reason });
        o.onStep?.(plan);
        tls = next;
      }
      if (config && config.webhooks.some((w) => !samePem(w.caPem, tls.caPem))) {
        await this.#patchConfig(config, tls.caPem);
        o.logger.info("webhook caBundle updated", {
          configuration: o.configName,
          cas: describePem(tls.caPem).length,
        });
      }
      if (tls.certPem !== this.#served) {
        this.#served = tls.certPem;
        o.onCert({ certPem: tls.certPem, keyPem: tls.keyPem });
      }
      // One step per round: a staged certificate is promoted in a later round, after every API
      // server has had the time to see the new caBundle.
      return tls;
    }
    throw new Error(`the webhook Secret ${o.namespace}/${o.secretName} kept changing`);
  }

  async #readSecret(): Promise<SecretRead> {
    const res = await this.#o.client.request("GET", this.#secretPath);
    if (res.status === 404) return {};
    if (res.status !== 200) throw errorOf(res, `GET ${this.#secretPath}`);
    const data: Record<string, string> = res.json?.data ?? {};
    const get = (
      k: keyof WebhookTls,
    ) => (data[SECRET_KEYS[k]] ? unb64(data[SECRET_KEYS[k]]) : undefined);
    const [caPem, certPem, keyPem] = [get("caPem"), get("certPem"), get("keyPem")];
    const [nextCertPem, nextKeyPem] = [get("nextCertPem"), get("nextKeyPem")];
    const tls = caPem && certPem && keyPem
      ? {
        caPem,
        certPem,
        keyPem,
        ...(nextCertPem && nextKeyPem ? { nextCertPem, nextKeyPem } : {}),
      }
      : undefined;
    return { tls, resourceVersion: res.json?.metadata?.resourceVersion ?? "" };
  }

  /** Creates or replaces the Secret; false when another writer got there first. */
  async #writeSecret(tls: WebhookTls, resourceVersion: string | undefined): Promise<boolean> {
    const o = this.#o;
    const data: Record<string, string> = {};
    for (const [k, key] of Object.entries(SECRET_KEYS)) {
      const v = tls[k as keyof WebhookTls];
      if (v) data[key] = b64(v);
    }
    const body = {
      apiVersion: "v1",
      kind: "Secret",
      type: "kubernetes.io/tls",
      metadata: {
        name: o.secretName,
        namespace: o.namespace,
        labels: { "app.kubernetes.io/name": "aether", "app.kubernetes.io/component": "webhook" },
        ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      },
      data,
    };
    const res = resourceVersion === undefined
      ? await o.client.request("POST", `/api/v1/namespaces/${o.namespace}/secrets`, body)
      : await o.client.request("PUT", this.#secretPath, body);
    if (res.status === 409) return false;
    if (res.status !== 200 && res.status !== 201) throw errorOf(res, `writing ${this.#secretPath}`);
    return true;
  }

  async #readConfig(): Promise<ConfigRead | undefined> {
    const res = await this.#o.client.request("GET", this.#configPath);
    if (res.status === 404) return undefined;
    if (res.status !== 200) throw errorOf(res, `GET ${this.#configPath}`);
    // deno-lint-ignore no-explicit-any
    const webhooks: any[] = res.json?.webhooks ?? [];
    return {
      webhooks: webhooks.map((w) => ({
        name: String(w.name),
        caPem: w.clientConfig?.caBundle ? unb64(w.clientConfig.caBundle) : "",
      })),
    };
  }

  /** Sets every webhook's caBundle (strategic merge: the list is keyed by name). */
  async #patchConfig(config: ConfigRead, caPem: string): Promise<void> {
    const patch = {
      webhooks: config.webhooks.map((w) => ({
        name: w.name,
        clientConfig: { caBundle: b64(caPem) },
      })),
    };
    const res = await this.#o.client.request(
      "PATCH",
      this.#configPath,
      patch,
      "application/strategic-merge-patch+json",
    );
    if (res.status !== 200) throw errorOf(res, `PATCH ${this.#configPath}`);
  }
}

/** The key ids of the CAs that every webhook's caBundle holds. */
function published(config: ConfigRead): Set<string> {
  const sets = config.webhooks.map((w) => {
    try {
      return new Set(describePem(w.caPem).map((c) => c.keyId));
    } catch {
      return new Set<string>();
    }
  });
  const [first, ...rest] = sets;
  return new Set([...(first ?? [])].filter((id) => rest.every((s) => s.has(id))));
}
