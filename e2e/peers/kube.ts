/**
 * A real Kubernetes control plane for tests: Debian's etcd + kube-apiserver built from
 * k8s.io/kubernetes, on ephemeral 127.0.0.1 ports, with an openssl-made CA, serving cert and an
 * admin client cert (system:masters). Authorization is AlwaysAllow (a test server) unless
 * `authorization: "RBAC"` is asked for (the admin cert is in system:masters either way).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { startEtcd } from "./etcd.ts";
import { exec, freePort, type Proc, spawn, stopAll, waitFor } from "./proc.ts";

/** A running API server. */
export interface Kube {
  /** https://127.0.0.1:<port> */
  url: string;
  /** A kubeconfig file for clients (admin client cert). */
  kubeconfig: string;
  /** Folder with ca.crt, sa.key, … */
  pki: string;
  procs: Proc[];
  /** etcd's client URL (its v3 HTTP gateway answers there too). */
  etcdUrl: string;
  /** Stops kube-apiserver only (etcd keeps the data); `startApiServer` brings it back. */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again on the same port and waits for /readyz. */
  startApiServer(): Promise<void>;
  /** `fetch` against the API server with the admin client cert; `body` objects are sent as JSON. */
  request(method: string, path: string, body?: unknown): Promise<KubeResponse>;
  stop(): Promise<void>;
}

/** A decoded API response. */
export interface KubeResponse {
  status: number;
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** CA, serving cert (127.0.0.1/localhost), admin client cert and the service-account key pair. */
const pkiScript = `set -e
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \\
  -keyout ca.key -out ca.crt -subj /CN=aether-test-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key -out server.csr \\
  -subj /CN=kube-apiserver 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\\nextendedKeyUsage=serverAuth\\n' > server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \\
  -extfile server.ext -out server.crt 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout admin.key -out admin.csr \\
  -subj /O=system:masters/CN=aether-admin 2>/dev/null
printf 'extendedKeyUsage=clientAuth\\n' > admin.ext
openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \\
  -extfile admin.ext -out admin.crt 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
openssl pkey -in sa.key -pubout -out sa.pub
`;

function kubeconfigYaml(url: string, ca: string, cert: string, key: string): string {
  const b64 = (s: string) => btoa(s);
  return `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: ${url}
    certificate-authority-data: ${b64(ca)}
users:
- name: admin
  user:
    client-certificate-data: ${b64(cert)}
    client-key-data: ${b64(key)}
contexts:
- name: test
  context: {cluster: test, user: admin}
current-context: test
`;
}

/** Starts etcd + kube-apiserver in `dir` and waits until /readyz answers ok. */
export async function startKube(
  dir: string,
  opts: {
    authorization?: "AlwaysAllow" | "RBAC";
    /** `--service-cluster-ip-range` (default 10.96.0.0/16); `<v4>,<v6>` makes it dual-stack. */
    serviceClusterIpRange?: string;
  } = {},
): Promise<Kube> {
  const apiserver = await ensurePeer("kube-apiserver");
  await ensurePeer("openssl");
  const pki = join(dir, "pki");
  await Deno.mkdir(pki, { recursive: true });
  const r = await exec("sh", ["-c", pkiScript], pki);
  if (r.code !== 0) throw new Error(`making test PKI failed: ${r.stderr}`);
  const procs: Proc[] = [];
  try {
    const etcd = await startEtcd(dir);
    procs.push(etcd.proc()!);
    const etcdUrl = etcd.url;
    const apiPort = freePort();

    const p = (f: string) => join(pki, f);
    const apiArgs = [
      `--etcd-servers=${etcdUrl}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      // The "kubernetes" Service endpoint reconciler refuses loopback addresses; nothing needs it.
      "--endpoint-reconciler-type=none",
      `--secure-port=${apiPort}`,
      `--cert-dir=${join(dir, "apiserver-certs")}`,
      `--tls-cert-file=${p("server.crt")}`,
      `--tls-private-key-file=${p("server.key")}`,
      `--client-ca-file=${p("ca.crt")}`,
      `--service-account-key-file=${p("sa.pub")}`,
      `--service-account-signing-key-file=${p("sa.key")}`,
      "--service-account-issuer=https://kubernetes.default.svc",
      `--service-cluster-ip-range=${opts.serviceClusterIpRange ?? "10.96.0.0/16"}`,
      `--authorization-mode=${opts.authorization ?? "AlwaysAllow"}`,
      "--enable-priority-and-fairness=false",
      // Debian's etcd 3.4.23 lacks the progress notifications a watch-list stream needs; this
      // server would refuse those streams, and kwok's client (client-go v0.36) then sees pods only
      // at relists whose back-off grows (pods 3 s apart Running after 0.9 … 39 s; with this flag
      // 0.1 s each). Plain list + watch, as before Kubernetes 1.32.
      "--feature-gates=WatchList=false",
      "--v=1",
    ];
    let apiProc = spawn("kube-apiserver", apiserver, apiArgs);
    procs.push(apiProc);
    const url = `https://127.0.0.1:${apiPort}`;
    const [ca, cert, key] = await Promise.all(
      ["ca.crt", "admin.crt", "admin.key"].map((f) => Deno.readTextFile(p(f))),
    );
    const client = Deno.createHttpClient({ caCerts: [ca], cert, key });
    const request = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method,
        client,
        headers: body === undefined ? {} : {
          "content-type": method === "PATCH" ? "application/merge-patch+json" : "application/json",
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      let json: unknown = text;
      try {
        json = JSON.parse(text);
      } catch { /* not JSON (e.g. /readyz) */ }
      return { status: res.status, json };
    };
    const ready = () =>
      waitFor(
        "kube-apiserver /readyz",
        async () => {
          const res = await request("GET", "/readyz");
          return res.status === 200 ? true : undefined;
        },
        120_000,
        procs.filter((x) => x !== apiProc || !x.exited()),
      );
    await ready();
    const kubeconfig = join(dir, "kubeconfig");
    await Deno.writeTextFile(kubeconfig, kubeconfigYaml(url, ca, cert, key));
    return {
      url,
      kubeconfig,
      pki,
      procs,
      etcdUrl,
      stopApiServer: () => apiProc.stop(),
      startApiServer: async () => {
        await apiProc.stop();
        const old = apiProc;
        apiProc = spawn("kube-apiserver", apiserver, apiArgs);
        procs.splice(procs.indexOf(old), 1, apiProc);
        await ready();
      },
      request,
      stop: async () => {
        client.close();
        await stopAll(procs);
      },
    };
  } catch (e) {
    await stopAll(procs);
    throw e;
  }
}

/**
 * Starts the rest of a control plane on `kube`: kube-controller-manager, kube-scheduler and kwok
 * (fake kubelets for Nodes annotated `kwok.x-k8s.io/node: fake`, with kwok's "fast" stages: pods
 * become Running and Ready with an IP from 10.244.0.0/24, nothing is executed). With
 * `processPods`, kwok's pod-ready stage is replaced by aether's `kwok/pod-started.yaml`: pods
 * become Running with their IP but not Ready, which e2e/pod_runner.ts reports. The processes are
 * added to `kube.procs`, so `kube.stop()` stops them.
 */
export async function startControllers(
  kube: Kube,
  opts: { processPods?: boolean } = {},
): Promise<void> {
  const [kcm, scheduler, kwok, stages] = [
    await ensurePeer("kube-controller-manager"),
    await ensurePeer("kube-scheduler"),
    await ensurePeer("kwok"),
    await ensurePeer("kwok-stages"),
  ];
  const common = [`--kubeconfig=${kube.kubeconfig}`, "--leader-elect=false"];
  const serving = () => ["--bind-address=127.0.0.1", `--secure-port=${freePort()}`];
  kube.procs.push(spawn("kube-controller-manager", kcm, [
    ...common,
    ...serving(),
    `--service-account-private-key-file=${join(kube.pki, "sa.key")}`,
    `--root-ca-file=${join(kube.pki, "ca.crt")}`,
    "--use-service-account-credentials=false",
  ]));
  kube.procs.push(spawn("kube-scheduler", scheduler, [...common, ...serving()]));
  const configs: string[] = [];
  for (const folder of ["node", "node-heartbeat", "pod"]) {
    for (const e of Deno.readDirSync(join(stages, folder))) {
      if (opts.processPods && folder === "pod" && e.name === "pod-ready.yaml") continue;
      configs.push(`--config=${join(stages, folder, e.name)}`);
    }
  }
  if (opts.processPods) {
    configs.push(`--config=${fileURLToPath(new URL("kwok/pod-started.yaml", import.meta.url))}`);
  }
  kube.procs.push(spawn("kwok", kwok, [
    `--kubeconfig=${kube.kubeconfig}`,
    "--manage-all-nodes=false",
    "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
    "--cidr=10.244.0.1/24",
    "--node-ip=127.0.0.1",
    ...configs,
  ]));
}

/** Where each kind in the CRD bundle is created. */
export const collection: Record<string, string> = {
  CustomResourceDefinition: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
  ValidatingAdmissionPolicy: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
  ValidatingAdmissionPolicyBinding:
    "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
};

/**
 * Creates every CRD (and admission policy) of the YAML files in `dir` and waits until each CRD is
 * Established; returns the CRD names.
 */
export async function installCrds(kube: Kube, dir: string): Promise<string[]> {
  const crds: string[] = [];
  for (const file of [...Deno.readDirSync(dir)].map((e) => e.name).sort()) {
    for (const doc of parseAllDocuments(await Deno.readTextFile(join(dir, file)))) {
      const obj = doc.toJS();
      if (!obj) continue;
      const path = collection[obj.kind];
      assert.ok(path, `unexpected kind ${obj.kind} in ${file}`);
      const res = await kube.request("POST", path, obj);
      assert.equal(res.status, 201, `${file}: ${JSON.stringify(res.json)}`);
      if (obj.kind === "CustomResourceDefinition") crds.push(obj.metadata.name);
    }
  }
  for (const name of crds) {
    await waitFor(
      `CRD ${name} established`,
      async () => {
        const res = await kube.request("GET", `${collection.CustomResourceDefinition}/${name}`);
        // deno-lint-ignore no-explicit-any
        const conds: any[] = res.json?.status?.conditions ?? [];
        return conds.some((c) => c.type === "Established" && c.status === "True")
          ? true
          : undefined;
      },
      30_000,
      kube.procs,
    );
  }
  return crds;
}
