/**
 * The switch of the Gateway API CRDs from the standard to the experimental channel (what a
 * conformance run does first) on a real etcd + kube-apiserver with real kubectl, through the race
 * that broke it: the API server still refusing CRD updates for a while after `safe-upgrades` was
 * deleted. The test holds them with an admission policy of its own (refusing every
 * gateway.networking.k8s.io CRD create or update) until a try of the switch was refused by it, then
 * deletes it; the switch must complete, with every experimental CRD Established and the
 * safe-upgrades policy back. Applying the whole folder at each try, as the switch once did, puts
 * safe-upgrades back at the first try, and it refuses every later one. Then back to standard: the
 * experimental-only CRDs are gone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  channelDir,
  crdNames,
  experimentalOnly,
  safeUpgrades,
  useChannel,
} from "../testbed/conformance/mod.ts";
import { Logger } from "../lib/log/mod.ts";
import { kubectl } from "./kubectl.ts";
import { type Kube, startKube } from "./peers/kube.ts";
import { waitFor } from "./peers/proc.ts";

const hold = "hold-gateway-crds.aether.test";
const holdMessage = "held by the crd channel switch test";

/** An admission policy and binding refusing every gateway.networking.k8s.io CRD write. */
const holdPolicy = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: ${hold}}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apiextensions.k8s.io]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [customresourcedefinitions]
  validations:
  - expression: "object.spec.group != 'gateway.networking.k8s.io'"
    message: ${holdMessage}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: ${hold}}
spec:
  policyName: ${hold}
  validationActions: [Deny]
`;

// deno-lint-ignore no-explicit-any
type Json = any;

async function crds(kubeconfig: string): Promise<Json[]> {
  return JSON.parse(await kubectl(kubeconfig, ["get", "crd", "-o", "json"])).items;
}

const established = (crd: Json) =>
  (crd.status?.conditions ?? []).some((c: Json) => c.type === "Established" && c.status === "True");

const channelOf = (crd: Json) => crd.metadata.annotations?.["gateway.networking.k8s.io/channel"];

Deno.test({
  name:
    "crd channel switch: standard → experimental completes while CRD writes are refused at first, safe-upgrades back; → standard drops the experimental-only CRDs",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "aether-crd-channel-" });
    let kube: Kube | undefined;
    let release: Promise<void> | undefined;
    try {
      kube = await startKube(dir);
      const kc = kube.kubeconfig;
      const k = (args: string[], stdin?: string) => kubectl(kc, args, stdin);
      await useChannel(kc, "standard");
      const standard = await crds(kc);
      assert.ok(standard.length >= 8 && standard.every((c) => channelOf(c) === "standard"));

      await k(["apply", "-f", "-"], holdPolicy);
      // Held once a standard CRD's own update (which safe-upgrades allows) is refused by the hold.
      const probe = ["apply", "--server-side", "--dry-run=server", "-f"]
        .concat(join(channelDir("standard"), "gateway.networking.k8s.io_httproutes.yaml"));
      await waitFor(
        "the hold refusing CRD updates",
        async () => {
          const refused = await k(probe).then(() => "", (e) => String(e));
          return refused.includes(holdMessage) ? true : undefined;
        },
        30_000,
        kube.procs,
      );

      // Released once the switch logged a try refused by the hold (the refusal may name
      // safe-upgrades while the API server still enforces it), or after 10 s for a switch that
      // logs nothing.
      const lines: string[] = [];
      const held = Promise.withResolvers<void>();
      const log = new Logger("test.channel", (line) => {
        lines.push(line);
        if (line.includes(holdMessage)) held.resolve();
      }, "info");
      const timer = setTimeout(held.resolve, 10_000);
      release = held.promise.then(async () => {
        clearTimeout(timer);
        await k(["delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", hold]);
      });
      const started = Date.now();
      await useChannel(kc, "experimental", log);
      console.log(`switch to experimental: ${Date.now() - started} ms`);
      for (const line of lines) console.log(line);
      await release;
      const refusals = lines.map((l) => JSON.parse(l)).filter((o) => o.attempt !== undefined);
      assert.ok(refusals.some((o) => o.refusal.includes(holdMessage)), lines.join("\n"));

      const experimental = await crds(kc);
      const names = experimental.map((c) => c.metadata.name).sort();
      const files = [...Deno.readDirSync(channelDir("experimental"))]
        .map((e) => Deno.readTextFileSync(join(channelDir("experimental"), e.name)));
      assert.deepEqual(names, crdNames(files));
      assert.ok(names.includes("tcproutes.gateway.networking.k8s.io"));
      assert.deepEqual(experimental.filter((c) => !established(c)).map((c) => c.metadata.name), []);
      assert.deepEqual(
        experimental.filter((c) => channelOf(c) !== "experimental").map((c) => c.metadata.name),
        [],
      );
      for (const kind of ["validatingadmissionpolicy", "validatingadmissionpolicybinding"]) {
        const got = JSON.parse(await k(["get", kind, safeUpgrades, "-o", "json"]));
        assert.equal(got.metadata.name, safeUpgrades);
      }
      assert.equal(await k(["get", "validatingadmissionpolicy", hold, "--ignore-not-found"]), "");

      await useChannel(kc, "standard", log);
      const back = (await crds(kc)).map((c) => c.metadata.name);
      const extra = await experimentalOnly();
      assert.deepEqual(back.filter((n) => extra.includes(n)), []);
      assert.deepEqual(back.sort(), standard.map((c) => c.metadata.name).sort());
    } finally {
      await release?.catch(() => {});
      await kube?.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
