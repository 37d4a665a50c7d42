import assert from "node:assert/strict";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import {
  channelDir,
  crdNames,
  experimentalOnly,
  refusal,
  safeUpgrades,
  splitChannel,
} from "./channel.ts";

Deno.test("channel: the experimental-only CRDs are TCPRoute, UDPRoute and the x-k8s.io kinds", async () => {
  assert.deepEqual(await experimentalOnly(), [
    "tcproutes.gateway.networking.k8s.io",
    "udproutes.gateway.networking.k8s.io",
    "xbackendtrafficpolicies.gateway.networking.x-k8s.io",
    "xmeshes.gateway.networking.x-k8s.io",
  ]);
});

Deno.test("channel: CRD names come from CustomResourceDefinition documents only", () => {
  const files = [
    "kind: CustomResourceDefinition\nmetadata: {name: b.x.io}\n---\nkind: CustomResourceDefinition\nmetadata: {name: a.x.io}\n",
    "kind: ValidatingAdmissionPolicy\nmetadata: {name: safe-upgrades}\n",
  ];
  assert.deepEqual(crdNames(files), ["a.x.io", "b.x.io"]);
});

Deno.test("channel: a channel splits into its CRDs and its admission policies", () => {
  const files = [
    "kind: CustomResourceDefinition\nmetadata: {name: a.x.io}\n",
    "kind: ValidatingAdmissionPolicy\nmetadata: {name: p}\nspec:\n  validations:\n" +
    "  - expression: \"!matches(x, 'v1.[0-4].\\\\\\\\d+')\"\n" +
    "---\nkind: ValidatingAdmissionPolicyBinding\nmetadata: {name: p}\n---\n",
    "# only a comment\n---\nkind: CustomResourceDefinition\nmetadata: {name: b.x.io}\n",
  ];
  const { crds, policies } = splitChannel(files);
  const docs = (text: string) => parseAllDocuments(text).map((d) => d.toJS());
  assert.deepEqual(docs(crds), [
    { kind: "CustomResourceDefinition", metadata: { name: "a.x.io" } },
    { kind: "CustomResourceDefinition", metadata: { name: "b.x.io" } },
  ]);
  assert.deepEqual(docs(policies), [
    {
      kind: "ValidatingAdmissionPolicy",
      metadata: { name: "p" },
      spec: { validations: [{ expression: "!matches(x, 'v1.[0-4].\\\\d+')" }] },
    },
    { kind: "ValidatingAdmissionPolicyBinding", metadata: { name: "p" } },
  ]);
});

Deno.test("channel: the vendored experimental channel splits into its CRDs and safe-upgrades", () => {
  const dir = channelDir("experimental");
  const files = [...Deno.readDirSync(dir)].map((e) => Deno.readTextFileSync(join(dir, e.name)));
  const { crds, policies } = splitChannel(files);
  const docs = (text: string) => parseAllDocuments(text).map((d) => d.toJS()).filter(Boolean);
  const isPolicy = (o: { kind: string }) => o.kind.startsWith("ValidatingAdmissionPolicy");
  // Each half round-trips: the same documents (the policy's CEL and regular expressions too).
  const all = files.flatMap(docs);
  assert.deepEqual(docs(crds), all.filter((o) => !isPolicy(o)));
  assert.deepEqual(docs(policies), all.filter(isPolicy));
  assert.deepEqual(docs(policies).map((o) => `${o.kind}/${o.metadata.name}`), [
    `ValidatingAdmissionPolicy/${safeUpgrades}`,
    `ValidatingAdmissionPolicyBinding/${safeUpgrades}`,
  ]);
  assert.equal(crdNames([crds]).length, docs(crds).length);
});

Deno.test("channel: a refused apply is told by its first refusal and how many more", () => {
  const message = "/x/kubectl --kubeconfig=k apply -f - failed (exit 1): Error from server " +
    '(Invalid): customresourcedefinitions "a" is invalid: denied\n' +
    'Error from server (Invalid): customresourcedefinitions "b" is invalid: denied\n';
  assert.equal(
    refusal(message),
    'Error from server (Invalid): customresourcedefinitions "a" is invalid: denied (and 1 more)',
  );
  assert.equal(
    refusal("kubectl failed (exit 1): connection refused\n"),
    "kubectl failed (exit 1): connection refused",
  );
});
