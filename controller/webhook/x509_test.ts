/**
 * The webhook's certificates: a CA and the serving certificate it signs pass the real `openssl
 * verify -purpose sslserver` (and node:crypto's checks), carry the names asked for, and read back
 * the validity, key ids and names they were made with. DER times switch to GeneralizedTime in 2050.
 */
import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { join } from "node:path";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { readTime, readTlv, time } from "./der.ts";
import { describePem, newCa, newServingCert, samePem, sanNames } from "./x509.ts";

const T0 = Date.UTC(2026, 0, 1);
const validity = { notBefore: T0, notAfter: T0 + 90 * 86_400_000 };

Deno.test("x509: CA + serving certificate verify with openssl, names and facts read back", async () => {
  const ca = await newCa("aether-webhook-ca-test", {
    ...validity,
    notAfter: validity.notAfter + 1e9,
  });
  const names = {
    dnsNames: ["hook.aether-system.svc", "hook.aether-system.svc.cluster.local"],
    ipAddresses: ["127.0.0.1", "fd00::1"],
  };
  const leaf = await newServingCert(ca, names, validity);
  const dir = await Deno.makeTempDir({ prefix: "aether-x509-" });
  try {
    await Deno.writeTextFile(join(dir, "ca.pem"), ca.certPem);
    await Deno.writeTextFile(join(dir, "leaf.pem"), leaf.certPem);
    const openssl = await ensurePeer("openssl");
    const at = String(Math.floor((T0 + 86_400_000) / 1000)); // inside the validity
    const verify = await new Deno.Command(openssl, {
      args: [
        "verify",
        "-attime",
        at,
        "-purpose",
        "sslserver",
        "-CAfile",
        join(dir, "ca.pem"),
        join(dir, "leaf.pem"),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const out = new TextDecoder().decode(verify.stdout) + new TextDecoder().decode(verify.stderr);
    assert.equal(verify.code, 0, out);
    assert.match(out, /leaf\.pem: OK/);
    const x = new X509Certificate(leaf.certPem);
    assert.ok(x.checkIssued(new X509Certificate(ca.certPem)));
    assert.ok(x.verify(new X509Certificate(ca.certPem).publicKey));
    assert.equal(new X509Certificate(ca.certPem).ca, true);
    assert.equal(x.ca, false);
    assert.match(x.subjectAltName ?? "", /DNS:hook\.aether-system\.svc, .*IP Address:127\.0\.0\.1/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const [facts] = describePem(leaf.certPem);
  const [caFacts] = describePem(ca.certPem);
  assert.equal(facts.notBefore, validity.notBefore);
  assert.equal(facts.notAfter, validity.notAfter);
  assert.equal(facts.issuerKeyId, caFacts.keyId);
  assert.notEqual(facts.keyId, caFacts.keyId);
  assert.deepEqual(facts.names, sanNames(names.dnsNames, names.ipAddresses));
  assert.ok(samePem(leaf.certPem, leaf.certPem) && !samePem(leaf.certPem, ca.certPem));
  assert.ok(samePem(ca.certPem + leaf.certPem, ca.certPem + leaf.certPem));
});

Deno.test("x509: UTCTime until 2049, GeneralizedTime from 2050, read back to the second", () => {
  for (
    const ms of [Date.UTC(2049, 11, 31, 23, 59, 59), Date.UTC(2050, 0, 1), Date.UTC(1999, 5, 1)]
  ) {
    const der = time(ms + 123);
    assert.equal(der[0], new Date(ms).getUTCFullYear() < 2050 ? 0x17 : 0x18);
    assert.equal(readTime(der, readTlv(der, 0)), ms);
  }
});
