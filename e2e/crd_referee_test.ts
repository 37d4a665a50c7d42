/**
 * The real kube-apiserver referees aether's admission: with the vendored Gateway API v1.5.1 CRDs
 * (experimental channel, the one aether admits against) installed on etcd + kube-apiserver, every
 * Gateway API object of the golden corpus (its invalid cases included) and a deterministic sample
 * of generated mutations is created with `dryRun=All&fieldValidation=Strict`; the API server's
 * accept/reject verdict must equal aether's (admitObject has no problems ⇔ 201).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ADMISSION_KINDS as KINDS } from "../lib/gatewayapi/mod.ts";
import { catalogueKind } from "../lib/gatewayapi/catalogue/mod.ts";
import { corpus, LARGE, mutations } from "../testbed/fixtures/mutation_corpus.ts";
import type { KubeObject } from "../lib/gatewayapi/mod.ts";
import { admitObject } from "../lib/gatewayapi/admission/mod.ts";
import { CelRules } from "../lib/gatewayapi/admission/mod.ts";
import { installCrds, type Kube, startKube } from "./peers/kube.ts";

const CRDS = fileURLToPath(
  new URL("../tools/gateway-api/v1.5.1/experimental/", import.meta.url),
);
/** Every how-many-th mutation of an object is sent (the whole set is ~20,000). */
const SAMPLE_EVERY = 40;
/** The CEL library, for the CRD rules without a hand predicate. */
const cel = await new CelRules().load();

// deno-lint-ignore no-explicit-any
type Json = any;

/** The objects sent: the corpus as it is, then a sample of each object's mutations. */
function sampleObjects(): Json[] {
  const objects = [...corpus(), ...LARGE];
  const out = [...objects];
  let n = 0;
  for (const obj of objects) {
    const body = KINDS[obj.kind].body;
    const spec = body.t === "object" ? body.props.spec : undefined;
    if (!spec || obj.spec === undefined || LARGE.includes(obj)) continue;
    for (const variant of mutations(spec, obj.spec)) {
      if (n++ % SAMPLE_EVERY === 0) out.push({ ...obj, spec: variant });
    }
  }
  return out;
}

/** Where an object is created: its kind's collection in its apiVersion and namespace. */
function collectionPath(obj: Json): string {
  const plural = catalogueKind(obj.kind).plural;
  const namespace = obj.metadata?.namespace || "default";
  return KINDS[obj.kind].namespaced
    ? `/apis/${obj.apiVersion}/namespaces/${namespace}/${plural}`
    : `/apis/${obj.apiVersion}/${plural}`;
}

/** The API server's verdict on creating `obj` (dry run): accepted, and why not. */
async function serverVerdict(kube: Kube, obj: Json): Promise<{ ok: boolean; why: string }> {
  const res = await kube.request(
    "POST",
    `${collectionPath(obj)}?dryRun=All&fieldValidation=Strict`,
    obj,
  );
  if (res.status === 201 || res.status === 200) return { ok: true, why: "" };
  // 404: the apiVersion is not served; 400/422: decoding or validation refused it.
  if ([400, 404, 422].includes(res.status)) {
    return { ok: false, why: `${res.status} ${res.json?.message ?? res.json}` };
  }
  throw new Error(
    `unexpected ${res.status} for ${JSON.stringify(obj)}: ${JSON.stringify(res.json)}`,
  );
}

Deno.test({
  name:
    "crd referee: kube-apiserver (dryRun=All) and aether's admission agree on the corpus and mutations",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "aether-crd-referee-" });
    let kube: Kube | undefined;
    try {
      kube = await startKube(dir);
      // The bundle's CRDs and admission policy, without the kustomization file.
      const crdDir = join(dir, "crds");
      await Deno.mkdir(crdDir);
      for (const e of Deno.readDirSync(CRDS)) {
        if (e.name.startsWith("gateway.networking.")) {
          await Deno.copyFile(join(CRDS, e.name), join(crdDir, e.name));
        }
      }
      await installCrds(kube, crdDir);
      const objects = sampleObjects();
      const namespaces = new Set(objects.map((o) => o.metadata?.namespace || "default"));
      for (const ns of namespaces) {
        if (typeof ns !== "string" || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns)) continue;
        const res = await kube.request("POST", "/api/v1/namespaces", {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: ns },
        });
        assert.ok([201, 409].includes(res.status), JSON.stringify(res.json));
      }
      const disagreements: string[] = [];
      let accepted = 0;
      for (const obj of objects) {
        const server = await serverVerdict(kube, obj);
        const ours = admitObject(obj as KubeObject, KINDS, cel).problems;
        if (server.ok) accepted++;
        if (server.ok !== (ours.length === 0)) {
          disagreements.push(
            `${obj.kind} ${obj.metadata?.name}: API server ${
              server.ok ? "accepts" : server.why
            }; ` +
              `aether ${
                ours.length === 0
                  ? "accepts"
                  : ours.map((p) => `${p.field}: ${p.message}`).join("; ")
              }; spec ${JSON.stringify(obj.spec).slice(0, 400)}`,
          );
        }
      }
      console.log(`referee: ${objects.length} objects, ${accepted} accepted by both`);
      assert.deepEqual(disagreements, [], `${disagreements.length} of ${objects.length} differ`);
      // The sample has both verdicts in quantity, so agreement is not trivial.
      assert.ok(accepted > 50 && objects.length - accepted > 50, `${accepted}/${objects.length}`);
    } finally {
      await kube?.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});
