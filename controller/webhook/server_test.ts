/**
 * The webhook's HTTPS server over real TLS: a review is answered; hostile bodies (not JSON, binary,
 * empty, too large) and a connection that sends garbage instead of TLS get an allowed review or
 * nothing, and the server keeps serving; a new certificate (of another CA) is served on the next
 * connection without a restart.
 */
import assert from "node:assert/strict";
import { Logger } from "../../lib/log/mod.ts";
import { reviewPod } from "./review.ts";
import { WebhookServer } from "./server.ts";
import { newCa, newServingCert } from "./x509.ts";

const now = Date.now();
const validity = { notBefore: now - 3_600_000, notAfter: now + 86_400_000 };

async function pki() {
  const ca = await newCa("test-ca", validity);
  return {
    ca,
    cert: await newServingCert(
      ca,
      { dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"] },
      validity,
    ),
  };
}

Deno.test("webhook server: reviews, hostile input, certificate swap", async () => {
  const one = await pki(), two = await pki();
  const logs: string[] = [];
  const server = await WebhookServer.start({
    hostname: "127.0.0.1",
    port: 0,
    cert: one.cert,
    path: "/mutate-pod-ndots",
    handle: (body) => reviewPod(body, { ndots: 2, excludedNamespaces: [] }).review,
    logger: new Logger("webhook", (l) => logs.push(l), "debug"),
    maxBodyBytes: 64 * 1024,
  });
  const url = `https://127.0.0.1:${server.port}/mutate-pod-ndots`;
  const post = async (ca: string, body: BodyInit, path = url, method = "POST") => {
    const client = Deno.createHttpClient({ caCerts: [ca] });
    try {
      const res = await fetch(path, { method, body: method === "POST" ? body : undefined, client });
      return { status: res.status, text: await res.text() };
    } finally {
      client.close();
    }
  };
  try {
    const review = {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: "u",
        kind: { group: "", version: "v1", kind: "Pod" },
        operation: "CREATE",
        namespace: "shop",
        object: { spec: {} },
      },
    };
    const ok = await post(one.ca.certPem, JSON.stringify(review));
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.text).response.patchType, "JSONPatch");

    const hostile: BodyInit[] = [
      "{not json",
      "",
      new Uint8Array([0xff, 0xfe, 0x00, 0x80, 0xc3]),
      "x".repeat(200 * 1024),
      JSON.stringify({ ...review, request: { ...review.request, object: "pod" } }),
    ];
    for (const body of hostile) {
      const r = await post(one.ca.certPem, body);
      assert.equal(r.status, 200);
      const response = JSON.parse(r.text).response;
      assert.equal(response.allowed, true);
      assert.match(response.warnings[0], /admitted unchanged/);
    }
    assert.equal(
      (await post(one.ca.certPem, "", `https://127.0.0.1:${server.port}/other`)).status,
      404,
    );
    assert.equal((await post(one.ca.certPem, "", url, "GET")).status, 405);

    // Not TLS at all, then a TLS client that gives up mid-handshake.
    const raw = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
    await raw.write(new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n\x00\x01\x02"));
    const buf = new Uint8Array(64);
    await raw.read(buf).catch(() => null);
    raw.close();
    assert.equal((await post(one.ca.certPem, JSON.stringify(review))).status, 200, "still serving");

    await assert.rejects(post(two.ca.certPem, "{}"), "the second CA is not trusted yet");
    server.setCert(two.cert);
    assert.equal(
      (await post(two.ca.certPem, JSON.stringify(review))).status,
      200,
      "new cert served",
    );
    await assert.rejects(post(one.ca.certPem, "{}"), "the old certificate is no longer served");
  } finally {
    await server.close();
  }
});
