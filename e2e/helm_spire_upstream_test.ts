/**
 * charts/aether with identity.spire.server.upstreamCaSecret: the SPIRE server's CA is signed by a
 * shared upstream CA (UpstreamAuthority "disk" on the Secret's tls.crt/tls.key, mounted read-only
 * into the server container only), so two clusters' SPIREs trust each other's SVIDs. Without the
 * value the server's CA stays self-signed and nothing is mounted. Rendered with the real helm; the
 * cluster lane's e2e/cluster_mcs_test.ts runs it.
 */
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer, projectRoot } from "../testbed/peers/mod.ts";
import { exec } from "./peers/proc.ts";

const chart = join(projectRoot, "charts", "aether");
// deno-lint-ignore no-explicit-any
type Any = any;

async function render(sets: string[]): Promise<Any[]> {
  const helm = await ensurePeer("helm");
  const r = await exec(helm, [
    "template",
    "aether",
    chart,
    "-n",
    "aether-system",
    "--set=agent.gamma=true",
    ...sets,
  ]);
  assertEquals(r.code, 0, r.stderr);
  return parseAllDocuments(r.stdout).map((d) => d.toJS()).filter(Boolean);
}

const serverConf = (docs: Any[]): string =>
  docs.find((d) => d.kind === "ConfigMap" && d.metadata.name === "spire-server").data[
    "server.conf"
  ];
const serverPod = (docs: Any[]) =>
  docs.find((d) => d.kind === "StatefulSet" && d.metadata.name === "spire-server").spec.template
    .spec;

Deno.test("helm chart: SPIRE's server CA under a shared upstream CA from a Secret", async () => {
  const plain = await render([]);
  assert(!serverConf(plain).includes("UpstreamAuthority"), serverConf(plain));
  assertEquals(
    serverPod(plain).volumes.filter((v: Any) => v.secret),
    [],
    "no Secret mounted without the value",
  );

  const shared = await render(["--set=identity.spire.server.upstreamCaSecret=clusterset-ca"]);
  const conf = serverConf(shared);
  const block = conf.match(/UpstreamAuthority "disk" \{[\s\S]*?\n {2}\}/)?.[0] ?? "";
  assert(block.includes('cert_file_path = "/run/spire/upstream-ca/tls.crt"'), conf);
  assert(block.includes('key_file_path = "/run/spire/upstream-ca/tls.key"'), conf);
  const pod = serverPod(shared);
  const volume = pod.volumes.find((v: Any) => v.name === "upstream-ca");
  assertEquals(volume.secret.secretName, "clusterset-ca");
  const [server, registrar] = pod.containers;
  assertEquals(
    server.volumeMounts.find((m: Any) => m.name === "upstream-ca"),
    { name: "upstream-ca", mountPath: "/run/spire/upstream-ca", readOnly: true },
  );
  assertEquals(
    registrar.volumeMounts.filter((m: Any) => m.name === "upstream-ca"),
    [],
    "only the server reads the CA's key",
  );
  // The agents' configuration does not change: they trust the bundle the server publishes.
  const agentConf = (docs: Any[]) =>
    docs.find((d) => d.kind === "ConfigMap" && d.metadata.name === "spire-agent").data;
  assertEquals(agentConf(shared), agentConf(plain));
});
