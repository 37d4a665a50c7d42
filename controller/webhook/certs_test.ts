/**
 * The certificate lifecycle with an injected clock: created, kept, staged at two thirds of its
 * life with a new CA in the bundle, held until the caBundle carries that CA, promoted, the old CA
 * pruned after it expires; renewed early when the names change; started over when expired,
 * unreadable, or served by a CA no longer trusted.
 */
import assert from "node:assert/strict";
import { applyStep, type CertState, planCerts, type WebhookTls } from "./certs.ts";
import { describePem, sanNames } from "./x509.ts";

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);
const NAMES = { dnsNames: ["hook.ns.svc"], ipAddresses: ["127.0.0.1"] };
const SANS = sanNames(NAMES.dnsNames, NAMES.ipAddresses);
const policy = { certLifetimeMs: 90 * DAY, renewAt: 2 / 3 };

const keyIds = (pem: string) => describePem(pem).map((c) => c.keyId);
const plan = (tls: WebhookTls | undefined, now: number, extra: Partial<CertState> = {}) =>
  planCerts({ tls, now, names: SANS, ...extra }, policy);

Deno.test("certs: create, keep, stage, wait for the caBundle, promote, prune", async () => {
  assert.equal(plan(undefined, T0).step, "create");
  let tls = await applyStep("create", undefined, NAMES, T0, policy);
  const [cert] = describePem(tls.certPem);
  assert.equal(cert.notAfter, T0 + 90 * DAY);
  assert.equal(cert.notBefore, T0 - 3_600_000, "an hour of clock skew");
  assert.deepEqual(keyIds(tls.caPem), [cert.issuerKeyId]);

  assert.equal(plan(tls, T0 + 59 * DAY).step, "keep");
  const due = plan(tls, T0 + 61 * DAY);
  assert.equal(due.step, "stage", due.reason);
  const staged = await applyStep("stage", tls, NAMES, T0 + 61 * DAY, policy);
  assert.equal(staged.certPem, tls.certPem, "the current certificate is still served");
  const [next] = describePem(staged.nextCertPem!);
  assert.deepEqual(keyIds(staged.caPem), [next.issuerKeyId, cert.issuerKeyId], "new CA first");

  const oldBundle = new Set(keyIds(tls.caPem));
  assert.equal(plan(staged, T0 + 61 * DAY, { published: oldBundle }).step, "keep", "not published");
  const published = new Set(keyIds(staged.caPem));
  assert.equal(plan(staged, T0 + 61 * DAY, { published }).step, "promote");
  assert.equal(
    plan(staged, T0 + 61 * DAY).step,
    "promote",
    "no configuration: nothing to wait for",
  );
  tls = await applyStep("promote", staged, NAMES, T0 + 61 * DAY, policy);
  assert.equal(tls.certPem, staged.nextCertPem);
  assert.equal(tls.nextCertPem, undefined);
  assert.equal(
    keyIds(tls.caPem).length,
    2,
    "the old CA stays while old certificates may be served",
  );

  assert.equal(plan(tls, T0 + 80 * DAY).step, "keep");
  assert.equal(plan(tls, T0 + 92 * DAY).step, "prune", "the old CA expired (a day after its cert)");
  tls = await applyStep("prune", tls, NAMES, T0 + 92 * DAY, policy);
  assert.deepEqual(keyIds(tls.caPem), [next.issuerKeyId]);
  assert.equal(plan(tls, T0 + 92 * DAY).step, "keep");
});

Deno.test("certs: names changed → staged early; expired, unreadable or untrusted → created anew", async () => {
  const tls = await applyStep("create", undefined, NAMES, T0, policy);
  const renamed = planCerts({ tls, now: T0 + DAY, names: sanNames(["other.ns.svc"]) }, policy);
  assert.equal(renamed.step, "stage", renamed.reason);
  assert.equal(plan(tls, T0 + 90 * DAY).step, "create", "expired");
  assert.equal(plan({ ...tls, certPem: "garbage" }, T0).step, "create");
  const broken = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  assert.equal(plan({ ...tls, certPem: broken }, T0).step, "create", "does not parse");
  const other = await applyStep("create", undefined, NAMES, T0, policy);
  assert.equal(plan({ ...tls, caPem: other.caPem }, T0).step, "create", "its CA is gone");
  const staged = await applyStep("stage", tls, NAMES, T0 + DAY, policy);
  assert.equal(plan({ ...staged, caPem: tls.caPem }, T0 + DAY).step, "unstage");
  const unstaged = await applyStep("unstage", staged, NAMES, T0 + DAY, policy);
  assert.equal(unstaged.nextCertPem, undefined);
});
