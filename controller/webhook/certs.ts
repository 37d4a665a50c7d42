/**
 * The webhook's certificate lifecycle: what the Secret holds, when to renew, and the renewal
 * itself. Every serving certificate gets a CA of its own, made for it and thrown away once it has
 * signed (no CA key is ever stored). A renewal therefore goes in two steps, so the API server
 * never meets a certificate it does not trust yet: **stage** — a new CA joins the bundle and its
 * certificate waits as `next` while the current one is still served — then, once the
 * MutatingWebhookConfiguration's `caBundle` carries the new CA, **promote** — `next` becomes the
 * served certificate. The old CA stays in the bundle until it expires (replicas that have not
 * reloaded yet still serve its certificate), then it is **pruned**. `planCerts` is pure (the
 * clock is an input); `applyStep` makes the keys.
 * @module
 */
import {
  type CertAndKey,
  type CertFacts,
  describeCert,
  describePem,
  fromPem,
  newCa,
  newServingCert,
  toPem,
} from "./x509.ts";

/** The webhook's TLS material as its Secret holds it. */
export interface WebhookTls {
  /** The CAs the API server must trust (PEM bundle), newest first. */
  caPem: string;
  /** The served certificate and its key. */
  certPem: string;
  keyPem: string;
  /** A staged certificate, served once its CA is in the caBundle. */
  nextCertPem?: string;
  nextKeyPem?: string;
}

/** Lifetimes. */
export interface CertPolicy {
  /** Validity of a serving certificate (its CA lives a day longer). */
  certLifetimeMs: number;
  /** Renew when this fraction of the lifetime has passed. */
  renewAt: number;
}

const DAY = 86_400_000;

/** 90 days, renewed after 60: a rotation runs six times a year, so it is exercised. */
export const DEFAULT_CERT_POLICY: CertPolicy = { certLifetimeMs: 90 * DAY, renewAt: 2 / 3 };

/** One step of the lifecycle. */
export type CertStep = "keep" | "create" | "stage" | "promote" | "unstage" | "prune";

/** What the plan looks at. */
export interface CertState {
  tls?: WebhookTls;
  now: number;
  /** The names the certificate must carry (`sanNames`). */
  names: readonly string[];
  /**
   * The key ids of the CAs every webhook's caBundle in the MutatingWebhookConfiguration holds;
   * undefined when there is no such configuration (nothing to wait for).
   */
  published?: ReadonlySet<string>;
}

/** The decided step and why. */
export interface CertPlan {
  step: CertStep;
  reason: string;
}

const renewal = (c: CertFacts, p: CertPolicy) =>
  c.notBefore + (c.notAfter - c.notBefore) * p.renewAt;

const iso = (ms: number) => new Date(ms).toISOString();

/** The next step for `state` (pure). */
export function planCerts(state: CertState, policy: CertPolicy = DEFAULT_CERT_POLICY): CertPlan {
  const { tls, now } = state;
  if (!tls) return { step: "create", reason: "no certificate yet" };
  let cas: CertFacts[], cert: CertFacts | undefined, next: CertFacts | undefined;
  try {
    cas = describePem(tls.caPem);
    cert = describePem(tls.certPem)[0];
    next = tls.nextCertPem ? describePem(tls.nextCertPem)[0] : undefined;
  } catch (e) {
    return {
      step: "create",
      reason: `the stored certificates do not parse: ${(e as Error).message}`,
    };
  }
  const trusted = new Set(cas.filter((c) => now < c.notAfter).map((c) => c.keyId));
  if (!cert) return { step: "create", reason: "no served certificate" };
  if (now >= cert.notAfter) return { step: "create", reason: `expired at ${iso(cert.notAfter)}` };
  if (!trusted.has(cert.issuerKeyId)) {
    return { step: "create", reason: "its CA is not in the bundle" };
  }
  if (next) {
    if (!trusted.has(next.issuerKeyId) || now >= next.notAfter) {
      return { step: "unstage", reason: "the staged certificate's CA is gone" };
    }
    if (!state.published || state.published.has(next.issuerKeyId)) {
      return { step: "promote", reason: "the caBundle carries its CA" };
    }
    return { step: "keep", reason: "waiting for the caBundle to carry the staged CA" };
  }
  if (now >= renewal(cert, policy)) {
    return { step: "stage", reason: `due since ${iso(renewal(cert, policy))}` };
  }
  if (cert.names.join(",") !== [...state.names].sort().join(",")) {
    return { step: "stage", reason: `names changed to ${[...state.names].sort().join(", ")}` };
  }
  if (cas.some((c) => now >= c.notAfter)) return { step: "prune", reason: "an expired CA" };
  return {
    step: "keep",
    reason: `valid until ${iso(cert.notAfter)}, renewal ${iso(renewal(cert, policy))}`,
  };
}

/** A fresh CA and the certificate it signs, valid from an hour before `now` (clock skew). */
async function issue(
  names: { dnsNames: readonly string[]; ipAddresses?: readonly string[] },
  now: number,
  policy: CertPolicy,
): Promise<{ ca: CertAndKey; cert: CertAndKey }> {
  const notBefore = now - 3_600_000;
  const notAfter = now + policy.certLifetimeMs;
  const ca = await newCa(`aether-webhook-ca-${now}`, { notBefore, notAfter: notAfter + DAY });
  const cert = await newServingCert(ca, names, { notBefore, notAfter });
  return { ca, cert };
}

/** The CAs of `pem` that are still valid at `now`, as a PEM bundle. */
function unexpired(pem: string, now: number): string {
  return fromPem(pem).filter((der) => now < describeCert(der).notAfter)
    .map((der) => toPem(der, "CERTIFICATE")).join("");
}

/** Carries out `step` on `tls`; "keep" returns it unchanged. */
export async function applyStep(
  step: CertStep,
  tls: WebhookTls | undefined,
  names: { dnsNames: readonly string[]; ipAddresses?: readonly string[] },
  now: number,
  policy: CertPolicy = DEFAULT_CERT_POLICY,
): Promise<WebhookTls> {
  if (step === "create" || !tls) {
    const { ca, cert } = await issue(names, now, policy);
    return { caPem: ca.certPem, certPem: cert.certPem, keyPem: cert.keyPem };
  }
  const current = { caPem: tls.caPem, certPem: tls.certPem, keyPem: tls.keyPem };
  switch (step) {
    case "stage": {
      const { ca, cert } = await issue(names, now, policy);
      return {
        ...current,
        caPem: ca.certPem + unexpired(tls.caPem, now),
        nextCertPem: cert.certPem,
        nextKeyPem: cert.keyPem,
      };
    }
    case "promote":
      return { caPem: tls.caPem, certPem: tls.nextCertPem!, keyPem: tls.nextKeyPem! };
    case "unstage":
      return current;
    case "prune":
      return { ...tls, caPem: unexpired(tls.caPem, now) };
    default:
      return tls;
  }
}
