import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import {
  checkTrustDomain,
  derToPem,
  parseSpiffeId,
  renewalOverdue,
  splitDer,
  type Svid,
} from "./svid.ts";
import { delegatedBundles } from "./delegated.ts";

Deno.test("splitDer: concatenated SEQUENCEs of short and long lengths", () => {
  const a = Uint8Array.from([0x30, 0x03, 1, 2, 3]);
  const long = new Uint8Array(4 + 300);
  long.set([0x30, 0x82, 0x01, 0x2c]);
  const both = new Uint8Array([...a, ...long]);
  const parts = splitDer(both);
  assert.equal(parts.length, 2);
  assert.deepEqual([...parts[0]], [...a]);
  assert.equal(parts[1].length, 304);
  assert.throws(() => splitDer(Uint8Array.from([0x30, 0x05, 1])), /truncated/);
  assert.throws(() => splitDer(Uint8Array.from([0x02, 0x01, 1])), /SEQUENCE/);
});

Deno.test("derToPem: 64-column base64 between the labels", () => {
  const pem = derToPem(new Uint8Array(100), "CERTIFICATE");
  const lines = pem.trim().split("\n");
  assert.equal(lines[0], "-----BEGIN CERTIFICATE-----");
  assert.equal(lines.at(-1), "-----END CERTIFICATE-----");
  assert.equal(lines[1].length, 64);
  assert.equal(Buffer.from(lines.slice(1, -1).join(""), "base64").length, 100);
});

Deno.test("parseSpiffeId: trust domain and path, bad IDs refused", () => {
  assert.deepEqual(parseSpiffeId("spiffe://td.example/ns/a/sa/b"), {
    trustDomain: "td.example",
    path: "/ns/a/sa/b",
  });
  assert.deepEqual(parseSpiffeId("spiffe://td"), { trustDomain: "td", path: "" });
  assert.throws(() => parseSpiffeId("https://td/x"), /spiffe:\/\//);
  assert.throws(() => parseSpiffeId("spiffe://TD/x"), /trust domain/);
  assert.throws(() => parseSpiffeId("spiffe://td/a/../b"), /not allowed/);
  assert.throws(() => parseSpiffeId("spiffe://td/a//b"), /not allowed/);
  assert.equal(checkTrustDomain("cluster.local"), "cluster.local");
  assert.throws(() => checkTrustDomain("spiffe://x"), /trust domain/);
});

Deno.test("delegatedBundles: sorted by trust domain, scheme dropped", () => {
  const cert = Buffer.from([0x30, 0x00]);
  const b = delegatedBundles({ ca_certificates: { "z.td": cert, "spiffe://a.td": cert } });
  assert.deepEqual(b.map((x) => x.trustDomain), ["a.td", "z.td"]);
  assert.match(b[0].caPem, /BEGIN CERTIFICATE/);
});

Deno.test("renewalOverdue: from two thirds of the lifetime until expiry", () => {
  const svid: Svid = {
    spiffeId: "spiffe://td/ns/a/sa/b",
    certChainPem: "",
    keyPem: "",
    issuedAt: 1_000,
    expiresAt: 4_000,
  };
  assert.equal(renewalOverdue(svid, 1_000), false, "fresh");
  assert.equal(renewalOverdue(svid, 2_500), false, "at half life SPIRE renews; not overdue yet");
  assert.equal(renewalOverdue(svid, 2_999), false);
  assert.equal(renewalOverdue(svid, 3_000), true, "two thirds of the lifetime");
  assert.equal(renewalOverdue(svid, 3_999), true);
  assert.equal(renewalOverdue(svid, 4_000), false, "expired is not overdue (it is dropped)");
});
