/**
 * The controller's admission webhooks. Built: **pod-ndots**, a mutating webhook that sets
 * `spec.dnsConfig.options` `ndots:2` on Pods created in meshed namespaces, so the mesh name
 * `<svc>.<meshDomain>` is tried as given before the search list (ndots.ts says why 2). It serves
 * HTTPS with its own certificate, made and renewed by the controller (certs.ts, keeper.ts), and
 * keeps the MutatingWebhookConfiguration's caBundle current; the configuration (chart) says
 * `failurePolicy: Ignore` and a short timeout, so a webhook that is down never blocks a pod.
 * Imports no engine: the webhook needs nothing resolve computes.
 *
 * ```ts
 * const webhook = await startPodWebhook(podWebhookDefaults("aether-system"), { client, logger, metrics });
 * await webhook.ready; // serving, with a certificate from the Secret
 * await webhook.close();
 * ```
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { Registry } from "../../lib/metrics/mod.ts";
import type { KubeClient } from "../../lib/kube/mod.ts";
import type { CertPolicy } from "./certs.ts";
import { CertKeeper } from "./keeper.ts";
import { DEFAULT_NDOTS } from "./ndots.ts";
import { reviewPod } from "./review.ts";
import { WebhookServer } from "./server.ts";
import { type CertAndKey, describePem } from "./x509.ts";

export { DEFAULT_NDOTS, type JsonPatchOp, type NdotsDecision, podNdotsPatch } from "./ndots.ts";
export { type Answered, reviewPod } from "./review.ts";
export { type CertPolicy, DEFAULT_CERT_POLICY, planCerts, type WebhookTls } from "./certs.ts";

/** The path the MutatingWebhookConfiguration calls. */
export const POD_NDOTS_PATH = "/mutate-pod-ndots";

/** Settings of the pod-ndots webhook (flags in docs/dns.md). */
export interface PodWebhookOptions {
  /** The controller's namespace: the Secret and the Service are here; its pods are never mutated. */
  namespace: string;
  /** The Service the API server calls (its names go into the certificate). */
  serviceName: string;
  secretName: string;
  /** The MutatingWebhookConfiguration whose caBundle is kept current. */
  configName: string;
  hostname: string;
  port: number;
  /** The ndots written (default 2). */
  ndots: number;
  /** Namespaces never mutated besides `namespace` (default kube-system). */
  excludedNamespaces: string[];
  /** IP addresses in the certificate besides the Service names (a webhook configured by URL). */
  ipAddresses?: string[];
  policy?: CertPolicy;
  /** Milliseconds between certificate syncs (default 60 s); 0: only when `sync()` is called. */
  syncIntervalMs?: number;
}

/** Defaults for a controller in `namespace`. */
export function podWebhookDefaults(namespace: string): PodWebhookOptions {
  return {
    namespace,
    serviceName: "aether-controller-webhook",
    secretName: "aether-webhook-tls",
    configName: "aether-pod-ndots",
    hostname: "0.0.0.0",
    port: 9443,
    ndots: DEFAULT_NDOTS,
    excludedNamespaces: ["kube-system"],
  };
}

/** What the webhook needs from the controller. */
export interface PodWebhookDeps {
  client: KubeClient;
  logger: Logger;
  metrics: Registry;
  /** Milliseconds clock for certificate validity and renewal (default Date.now). */
  now?: () => number;
}

/** A running pod-ndots webhook. */
export interface PodWebhook {
  /** Resolves once the server listens with a certificate (after the first successful sync). */
  ready: Promise<void>;
  /** The bound port (after `ready`). */
  port(): number;
  /** One certificate round now (renewal, caBundle); throws on an API error. */
  sync(): Promise<void>;
  /** For `/status`. */
  status(): Record<string, unknown>;
  close(): Promise<void>;
}

/** Starts the webhook: certificate sync in the background, the server once it has one. */
export function startPodWebhook(opts: PodWebhookOptions, deps: PodWebhookDeps): PodWebhook {
  const log = deps.logger;
  const reviews = deps.metrics.counter(
    "aether_webhook_reviews_total",
    "Admission reviews answered, by webhook and result (mutated, skipped, invalid)",
  );
  const expiry = deps.metrics.gauge(
    "aether_webhook_certificate_expiry_timestamp_seconds",
    "When the served webhook certificate expires",
  );
  const steps = deps.metrics.counter(
    "aether_webhook_certificate_steps_total",
    "Certificate lifecycle steps taken (create, stage, promote, unstage, prune)",
  );
  const handshakes = deps.metrics.counter(
    "aether_webhook_tls_handshakes_total",
    "TLS connections the webhook server accepted (the API server keeps them alive)",
  );
  const failures = deps.metrics.counter(
    "aether_webhook_sync_errors_total",
    "Certificate syncs that failed (the API server refused or was away)",
  );
  const excluded = [...new Set([...opts.excludedNamespaces, opts.namespace])];
  const handle = (body: unknown) => {
    const a = reviewPod(body, { ndots: opts.ndots, excludedNamespaces: excluded });
    reviews.inc({ webhook: "pod-ndots", result: a.result });
    if (a.result === "invalid") {
      log.warn("pod-ndots review answered unchanged", { reason: a.reason });
    }
    return a.review;
  };
  let server: WebhookServer | undefined;
  let starting: Promise<WebhookServer> | undefined;
  let cert: CertAndKey | undefined;
  let closed = false;
  let lastError = "";
  let signalReady: () => void = () => {};
  const ready = new Promise<void>((r) => (signalReady = r));
  const service = `${opts.serviceName}.${opts.namespace}`;
  const keeper = new CertKeeper({
    client: deps.client,
    namespace: opts.namespace,
    secretName: opts.secretName,
    configName: opts.configName,
    dnsNames: [`${service}.svc`, `${service}.svc.cluster.local`, service, opts.serviceName],
    ipAddresses: opts.ipAddresses,
    policy: opts.policy,
    now: deps.now ?? Date.now,
    logger: log,
    onCert: (c) => {
      cert = c;
      expiry.set(describePem(c.certPem)[0].notAfter / 1000);
      server?.setCert(c);
    },
    onStep: (plan) => steps.inc({ step: plan.step }),
  });
  /** Starts the server with the current certificate, once; throws when it cannot listen. */
  const listen = async (c: CertAndKey) => {
    starting ??= WebhookServer.start({
      hostname: opts.hostname,
      port: opts.port,
      cert: c,
      path: POD_NDOTS_PATH,
      handle,
      logger: log,
      onHandshake: () => handshakes.inc({ webhook: "pod-ndots" }),
    }).finally(() => (starting = undefined));
    const s = await starting;
    if (closed) return await s.close();
    if (server) return; // another sync got there first
    server = s;
    if (cert && cert !== c) s.setCert(cert); // renewed while it was starting
    log.info("pod-ndots webhook serving", { address: `${opts.hostname}:${s.port}` });
    signalReady();
  };
  const sync = async () => {
    await keeper.sync();
    if (!server && cert && !closed) await listen(cert);
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const loop = (delay: number) => {
    if (closed || opts.syncIntervalMs === 0) return;
    timer = setTimeout(async () => {
      let wait = opts.syncIntervalMs ?? 60_000;
      try {
        await sync();
        lastError = "";
      } catch (e) {
        failures.inc();
        lastError = String(e);
        log.warn("webhook certificate sync failed", { error: lastError });
        if (!server) wait = Math.min(wait, 2000); // nothing served yet: try again soon
      }
      loop(wait);
    }, delay);
  };
  loop(0);
  return {
    ready,
    port: () => server?.port ?? 0,
    sync,
    status: () => ({ serving: !!server, ...(lastError ? { certificateError: lastError } : {}) }),
    close: async () => {
      closed = true;
      clearTimeout(timer);
      await starting?.catch(() => {});
      await server?.close();
    },
  };
}
