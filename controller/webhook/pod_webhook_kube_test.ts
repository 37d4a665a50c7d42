/**
 * The pod-ndots webhook behind a real kube-apiserver, with the chart's own
 * MutatingWebhookConfiguration (rendered by `helm template`, its Service clientConfig swapped for
 * the test server's URL: there is no Service routing without kube-proxy). Pods created through the
 * API server come back with `ndots:2`, except where they are to be left alone; a second replica
 * reuses the first one's Secret; the certificate is renewed (injected clock) through stage and
 * promote with pods mutated throughout — the API server trusts each certificate it meets; and with
 * the webhook stopped a pod is still created, unchanged.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { ensurePeer, projectRoot } from "../../testbed/peers/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { KubeClient } from "../../lib/kube/mod.ts";
import { type Kube, startKube } from "../../e2e/peers/kube.ts";
import { exec, waitFor } from "../../e2e/peers/proc.ts";
import { POD_NDOTS_PATH, type PodWebhook, podWebhookDefaults, startPodWebhook } from "./mod.ts";
import { describePem } from "./x509.ts";

const NS = "aether-system";
const DAY = 86_400_000;
// deno-lint-ignore no-explicit-any
type Any = any;

async function must(kube: Kube, method: string, path: string, body?: unknown): Promise<Any> {
  const res = await kube.request(method, path, body);
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

/** The chart's MutatingWebhookConfiguration, pointed at `url`. */
async function chartConfig(url: string): Promise<Any> {
  const helm = await ensurePeer("helm");
  const r = await exec(helm, [
    "template",
    "aether",
    join(projectRoot, "charts", "aether"),
    "-n",
    NS,
    "--set",
    "injectPodNdots=true",
    "-s",
    "templates/pod_ndots_webhook.yaml",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const docs: Any[] = parseAllDocuments(r.stdout).map((d) => d.toJS()).filter(Boolean);
  const config = docs.find((d) => d.kind === "MutatingWebhookConfiguration");
  assert.equal(config.webhooks[0].failurePolicy, "Ignore");
  assert.equal(config.webhooks[0].clientConfig.service.path, POD_NDOTS_PATH);
  assert.equal(config.webhooks[0].clientConfig.caBundle, undefined, "the controller's to set");
  config.webhooks[0].clientConfig = { url };
  return config;
}

const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "c", image: "alpine" }], ...spec },
});

Deno.test("pod-ndots webhook on a real API server: mutation, renewal, down", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "aether-webhook-" });
  const kube = await startKube(dir);
  const client = new KubeClient({ kubeconfig: kube.kubeconfig });
  const logs: string[] = [];
  const logger = new Logger("webhook", (l) => logs.push(l), "debug");
  const metrics = new Registry();
  // The first certificate is made 80 days "ago": valid for the API server now, due for renewal
  // once the clock moves to the present (renewal at 60 of its 90 days).
  let clock = Date.now() - 80 * DAY;
  const opts = { ...podWebhookDefaults(NS), hostname: "127.0.0.1", ipAddresses: ["127.0.0.1"] };
  const webhooks: PodWebhook[] = [];
  const start = (port: number) => {
    const w = startPodWebhook({ ...opts, port, syncIntervalMs: 0 }, {
      client,
      logger,
      metrics,
      now: () => clock,
    });
    webhooks.push(w);
    return w;
  };
  const secret = () => must(kube, "GET", `/api/v1/namespaces/${NS}/secrets/aether-webhook-tls`);
  const configPath =
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/aether-pod-ndots";
  const bundle = async () =>
    atob((await must(kube, "GET", configPath)).webhooks[0].clientConfig.caBundle ?? "");
  let n = 0;
  /** Creates a pod in `ns`; returns its dnsConfig options as the API server stored them. */
  const create = async (ns: string, spec: Record<string, unknown> = {}) => {
    const made = await must(kube, "POST", `/api/v1/namespaces/${ns}/pods`, pod(`p${n++}`, spec));
    return (made.spec.dnsConfig?.options ?? []) as { name: string; value?: string }[];
  };
  const mutated = (opts: { name: string; value?: string }[]) =>
    opts.some((o) => o.name === "ndots" && o.value === "2");
  const count = (name: string, labels: string) =>
    Number(
      metrics.render().split("\n").find((l) => l.startsWith(`${name}{${labels}} `))?.split(
        " ",
      )[1] ??
        0,
    );
  const reviews = (result: string) =>
    count("aether_webhook_reviews_total", `result="${result}",webhook="pod-ndots"`);
  try {
    for (const ns of ["shop", NS]) {
      await must(kube, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
    }
    for (const ns of ["shop", NS, "kube-system"]) {
      // No controller-manager here: the ServiceAccount admission plugin needs the default account.
      await must(kube, "POST", `/api/v1/namespaces/${ns}/serviceaccounts`, {
        metadata: { name: "default" },
      });
    }
    const a = start(0);

    await t.step(
      "first sync: certificate made, server up; the chart's configuration gets its caBundle",
      async () => {
        await a.sync();
        await a.ready;
        const s = await secret();
        assert.equal(s.type, "kubernetes.io/tls");
        assert.deepEqual(Object.keys(s.data).sort(), ["ca.crt", "tls.crt", "tls.key"]);
        await must(
          kube,
          "POST",
          "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
          await chartConfig(`https://127.0.0.1:${a.port()}${POD_NDOTS_PATH}`),
        );
        await a.sync();
        assert.equal(await bundle(), atob(s.data["ca.crt"]));
      },
    );

    await t.step("a pod created through the API server comes back with ndots:2", async () => {
      // The API server picks the configuration up from its own watch: wait for the first mutation.
      await waitFor(
        "the API server calls the webhook",
        async () => mutated(await create("shop")) || undefined,
        30_000,
        kube.procs,
      );
      assert.deepEqual(await create("shop"), [{ name: "ndots", value: "2" }]);
      const kept = await create("shop", {
        dnsConfig: { options: [{ name: "timeout", value: "1" }] },
      });
      assert.deepEqual(kept, [{ name: "timeout", value: "1" }, { name: "ndots", value: "2" }]);
      assert.ok(reviews("mutated") >= 3);
    });

    await t.step(
      "left alone: own ndots, dnsPolicy Default, host network, kube-system, aether's namespace",
      async () => {
        assert.deepEqual(
          await create("shop", { dnsConfig: { options: [{ name: "ndots", value: "5" }] } }),
          [
            { name: "ndots", value: "5" },
          ],
        );
        assert.deepEqual(await create("shop", { dnsPolicy: "Default" }), []);
        assert.deepEqual(await create("shop", { hostNetwork: true }), []);
        const before = reviews("mutated") + reviews("skipped");
        assert.deepEqual(await create("kube-system"), []);
        assert.deepEqual(await create(NS), []);
        assert.equal(reviews("mutated") + reviews("skipped"), before, "not even called there");
      },
    );

    await t.step(
      "a second replica uses the first one's Secret and serves the same certificate",
      async () => {
        const version = (await secret()).metadata.resourceVersion;
        const b = start(0);
        await b.sync();
        await b.ready;
        assert.equal((await secret()).metadata.resourceVersion, version, "not rewritten");
        const ca = atob((await secret()).data["ca.crt"]);
        const http = Deno.createHttpClient({ caCerts: [ca] });
        try {
          const res = await fetch(`https://127.0.0.1:${b.port()}${POD_NDOTS_PATH}`, {
            method: "POST",
            body: "{}",
            client: http,
          });
          assert.equal(res.status, 200);
          assert.equal((await res.json()).response.allowed, true);
        } finally {
          http.close();
        }
      },
    );

    await t.step(
      "renewal: staged with a new CA in the caBundle, then promoted; pods mutated throughout",
      async () => {
        const old = await secret();
        clock = Date.now();
        await a.sync();
        const staged = await secret();
        assert.ok(staged.data["next.crt"], "a staged certificate");
        assert.equal(staged.data["tls.crt"], old.data["tls.crt"], "still serving the old one");
        assert.equal(describePem(await bundle()).length, 2, "both CAs published");
        assert.ok(mutated(await create("shop")));
        const handshakesBefore = count(
          "aether_webhook_tls_handshakes_total",
          'webhook="pod-ndots"',
        );
        await a.sync();
        const promoted = await secret();
        assert.equal(promoted.data["tls.crt"], staged.data["next.crt"]);
        assert.equal(promoted.data["next.crt"], undefined);
        const [served] = describePem(atob(promoted.data["tls.crt"]));
        assert.ok(served.notAfter > Date.now() + 80 * DAY, "the new certificate's validity");
        // The API server now meets the new certificate (its idle connection was closed: a new
        // handshake), signed by the new CA, and trusts it.
        assert.ok(mutated(await create("shop")));
        assert.ok(
          count("aether_webhook_tls_handshakes_total", 'webhook="pod-ndots"') > handshakesBefore,
        );
        assert.match(
          metrics.render(),
          /aether_webhook_certificate_steps_total\{step="promote"\} 1/,
        );
        assert.match(logs.join("\n"), /"step":"stage"/);
      },
    );

    await t.step("webhook down or hung: pods are still created, unchanged", async () => {
      const port = a.port();
      for (const w of webhooks.splice(0)) await w.close();
      assert.deepEqual(await create("shop"), [], "connection refused: failurePolicy Ignore");
      assert.deepEqual(await create("shop", { dnsConfig: { options: [{ name: "edns0" }] } }), [{
        name: "edns0",
      }]);
      // Accepts and never answers: the API server gives up after the chart's timeoutSeconds.
      const hung = Deno.listen({ hostname: "127.0.0.1", port });
      const held: Deno.Conn[] = [];
      const accepting = (async () => {
        for await (const c of hung) held.push(c);
      })();
      try {
        assert.deepEqual(await create("shop"), []);
        assert.ok(held.length > 0, "the API server did call the hung webhook");
      } finally {
        hung.close();
        for (const c of held) c.close();
        await accepting.catch(() => {});
      }
    });
  } finally {
    for (const w of webhooks) await w.close();
    client.close();
    await kube.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
