import assert from "node:assert/strict";
import { join } from "node:path";
import { parse } from "yaml";
import { type CommandIO, translateCommand } from "./mod.ts";

function capture(): CommandIO & { out: string; err: string } {
  const io = {
    out: "",
    err: "",
    stdout: (t: string) => void (io.out += t),
    stderr: (t: string) => void (io.err += t),
  };
  return io;
}

type Doc = {
  role: string;
  proxies: { nodeId: string; version: string; resources: Record<string, { name?: string }[]> }[];
  objects?: { kind: string; name: string; status: { parents?: { conditions: unknown[] }[] } }[];
  problems?: { kind: string; name: string; source?: string; message: string }[];
};

const names = (doc: Doc, type: string, proxy = 0) =>
  (doc.proxies[proxy].resources[type] ?? []).map((r) =>
    r.name ?? (r as { cluster_name?: string }).cluster_name
  );

Deno.test("translate: the quickstart's edge resources as JSON, exit 0", async () => {
  const io = capture();
  const code = await translateCommand(
    ["--config", "examples/quickstart", "--output", "json", "--status"],
    io,
  );
  assert.equal(code, 0, io.err);
  const doc = JSON.parse(io.out) as Doc;
  assert.equal(doc.role, "edge");
  assert.match(doc.proxies[0].version, /^[0-9a-f]{16}$/);
  assert.deepEqual(names(doc, "Listener"), ["127.0.0.1:18080"]);
  assert.deepEqual(names(doc, "Cluster"), ["echo-v1.aether.internal", "echo-v2.aether.internal"]);
  assert.deepEqual(names(doc, "ClusterLoadAssignment"), names(doc, "Cluster"));
  assert.ok(names(doc, "VirtualHost").some((n) => n?.includes("echo.example.com")));
  // Decoded into Envoy's JSON form: enum names, not numbers.
  assert.equal((doc.proxies[0].resources.Cluster[0] as { type?: string }).type, "EDS");
  const route = doc.objects!.find((o) => o.kind === "HTTPRoute" && o.name === "echo")!;
  assert.match(JSON.stringify(route.status), /"type":"Accepted","status":"True"/);
  assert.deepEqual(doc.problems, []);
});

Deno.test("translate: a config with problems prints them and exits 1; YAML output by default", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.copyFile("examples/quickstart/gateway.yaml", join(dir, "gateway.yaml"));
    await Deno.writeTextFile(
      join(dir, "route.yaml"),
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: lost, namespace: default}
spec:
  parentRefs: [{name: demo}]
  rules: [{matches: [{path: {type: PathPrefix, value: no-slash}}]}]
`,
    );
    await Deno.writeTextFile(join(dir, "broken.yaml"), "kind: [unclosed\n");
    const io = capture();
    const code = await translateCommand(["--config", dir, "--status"], io);
    assert.equal(code, 1);
    const doc = parse(io.out) as Doc;
    assert.deepEqual(names(doc, "Listener"), ["127.0.0.1:18080"]);
    assert.ok(doc.problems!.some((p) => p.source?.endsWith("broken.yaml")), io.err);
    assert.ok(
      doc.problems!.some((p) =>
        p.kind === "HTTPRoute" && p.name === "lost" && p.source?.endsWith("route.yaml")
      ),
      io.err,
    );
    assert.match(io.err, /route\.yaml HTTPRoute\/default\/lost/);
    assert.match(io.err, /problem\(s\) in the config/);
    // Without --status the document has resources only; the exit code still tells.
    const plain = capture();
    assert.equal(await translateCommand(["--config", dir], plain), 1);
    assert.equal((parse(plain.out) as Doc).problems, undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("translate --role node: every node a Pod names, with its per-pod listeners", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const pod = (name: string, ns: string, node: string) =>
      `---
apiVersion: v1
kind: Pod
metadata:
  name: ${name}
  namespace: ${ns}
  annotations: {aether.io/netns-path: /var/run/netns/${name}}
spec: {nodeName: ${node}, containers: [{name: c, image: x}]}
status: {phase: Running, podIP: 10.0.0.9}
`;
    await Deno.writeTextFile(
      join(dir, "mesh.yaml"),
      `apiVersion: v1
kind: Service
metadata: {name: api, namespace: shop}
spec: {clusterIP: 10.96.0.10, ports: [{name: http, port: 80}]}
` + pod("web-1", "shop", "n1") + pod("job-1", "batch", "n2"),
    );
    const io = capture();
    const code = await translateCommand(
      ["--config", dir, "--role", "node", "--output", "json"],
      io,
    );
    assert.equal(code, 0, io.err);
    const doc = JSON.parse(io.out) as Doc;
    assert.equal(doc.role, "node");
    assert.deepEqual(doc.proxies.map((p) => p.nodeId), ["n1", "n2"]);
    assert.deepEqual(names(doc, "Listener", 0), ["outbound|shop/web-1"]);
    assert.deepEqual(names(doc, "Listener", 1), ["outbound|batch/job-1"]);
    assert.ok(names(doc, "Cluster", 0).includes("api.aether.internal"));
    const only = capture();
    assert.equal(
      await translateCommand(["--config", dir, "--role", "node", "--node-id", "n2"], only),
      0,
    );
    assert.deepEqual((parse(only.out) as Doc).proxies.map((p) => p.nodeId), ["n2"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("translate: usage errors exit 2 and say what is missing", async () => {
  for (
    const [args, why] of [
      [[], /--config is required/],
      [["--config", ".", "--role", "mesh"], /--role is edge or node/],
      [["--config", ".", "--output", "xml"], /--output is yaml or json/],
      [["--config", ".", "--bogus"], /Unknown option/],
    ] as const
  ) {
    const io = capture();
    assert.equal(await translateCommand([...args], io), 2);
    assert.match(io.err, why);
  }
});
