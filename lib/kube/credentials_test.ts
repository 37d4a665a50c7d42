/**
 * Credential loading from files (the real API server's side: every lib/kube and controller test
 * against kube-apiserver connects through these, with client certificates).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { inClusterCredentials, kubeconfigCredentials } from "./credentials.ts";

const b64 = (s: string) => btoa(s);

async function withDir(f: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "aether-creds-" });
  try {
    await f(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const kubeconfig = (user: Record<string, unknown>, cluster: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    "current-context": "main",
    contexts: [
      { name: "main", context: { cluster: "c", user: "u" } },
      { name: "other", context: { cluster: "c2", user: "u" } },
    ],
    clusters: [
      { name: "c", cluster: { server: "https://127.0.0.1:6443", ...cluster } },
      { name: "c2", cluster: { server: "https://10.0.0.2:6443" } },
    ],
    users: [{ name: "u", user }],
  });

Deno.test("kubeconfig: -data fields, the current context, another context by name", async () => {
  await withDir(async (dir) => {
    const file = join(dir, "config");
    await Deno.writeTextFile(
      file,
      kubeconfig(
        { "client-certificate-data": b64("CERT"), "client-key-data": b64("KEY") },
        { "certificate-authority-data": b64("CA") },
      ),
    );
    const c = kubeconfigCredentials(file);
    assert.equal(c.server, "https://127.0.0.1:6443");
    assert.deepEqual(await c.secrets(), { ca: "CA", cert: "CERT", key: "KEY", headers: {} });
    assert.equal(kubeconfigCredentials(file, "other").server, "https://10.0.0.2:6443");
  });
});

Deno.test("kubeconfig: files relative to it, a token file re-read once its refresh is due", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "ca.crt"), "CA-FILE");
    await Deno.writeTextFile(join(dir, "token"), "one\n");
    const file = join(dir, "config");
    await Deno.writeTextFile(
      file,
      kubeconfig({ tokenFile: "token" }, { "certificate-authority": "ca.crt" }),
    );
    let now = 0;
    const c = kubeconfigCredentials(file, undefined, { refreshMs: 1000, now: () => now });
    const first = await c.secrets();
    assert.equal(first.ca, "CA-FILE");
    assert.deepEqual(first.headers, { authorization: "Bearer one" });
    await Deno.writeTextFile(join(dir, "token"), "two\n");
    assert.deepEqual((await c.secrets()).headers, { authorization: "Bearer one" });
    now = 1000;
    assert.deepEqual((await c.secrets()).headers, { authorization: "Bearer two" });
  });
});

Deno.test("kubeconfig: what is wrong is said", async () => {
  await withDir(async (dir) => {
    const file = join(dir, "config");
    await Deno.writeTextFile(file, kubeconfig({}, { "insecure-skip-tls-verify": true }));
    assert.throws(() => kubeconfigCredentials(file), /insecure-skip-tls-verify/);
    assert.throws(() => kubeconfigCredentials(file, "nope"), /no context named "nope"/);
    await Deno.writeTextFile(file, JSON.stringify({ clusters: [] }));
    assert.throws(() => kubeconfigCredentials(file), /no current cluster/);
    assert.throws(() => kubeconfigCredentials(join(dir, "missing")), /kubeconfig .*missing/);
  });
});

Deno.test("kubeconfig: an exec user is left to @kubernetes/client-node, loaded on use", async () => {
  await withDir(async (dir) => {
    const file = join(dir, "config");
    const apiVersion = "client.authentication.k8s.io/v1";
    const answer = JSON.stringify({
      apiVersion,
      kind: "ExecCredential",
      status: { token: "from-exec" },
    });
    const exec = { apiVersion, command: "sh", args: ["-c", `echo '${answer}'`] };
    await Deno.writeTextFile(file, kubeconfig({ exec }));
    const c = kubeconfigCredentials(file);
    assert.equal(c.server, "https://127.0.0.1:6443");
    assert.equal((await c.secrets()).headers.authorization, "Bearer from-exec");
  });
});

Deno.test("in-cluster: the service account's token and CA, IPv6 hosts bracketed", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "token"), "sa-token");
    await Deno.writeTextFile(join(dir, "ca.crt"), "SA-CA");
    const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });
    const c = inClusterCredentials(
      env({ KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" }),
      dir,
    );
    assert.equal(c.server, "https://[fd00::1]:443");
    assert.deepEqual(await c.secrets(), {
      ca: "SA-CA",
      headers: { authorization: "Bearer sa-token" },
    });
    assert.throws(() => inClusterCredentials(env({}), dir), /KUBERNETES_SERVICE_HOST/);
  });
});
