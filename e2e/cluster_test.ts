/**
 * The local cluster end to end: up → a Deployment of echo-basic (image built here, no registry)
 * Ready → its pod IP answers from the host → `kubectl exec` over SPDY into a busybox pod → cluster
 * DNS → the Service's ClusterIP through kube-proxy → down leaves nothing on the machine.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { clusterStatus, imageNames, leftovers, withCluster } from "../testbed/cluster/mod.ts";
import { appSources, imageSources } from "../testbed/image_files.ts";
import { archiveLayerPaths } from "../testbed/cluster/mod.ts";
import { paths } from "../testbed/cluster/mod.ts";
import { readSysctls } from "../testbed/cluster/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { kubectl } from "./kubectl.ts";
import { waitFor } from "./peers/proc.ts";

const manifests = (echo: string, busybox: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      containers:
      - name: echo
        image: ${echo}
        imagePullPolicy: Never
        env:
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
        ports: [{containerPort: 3000}]
        readinessProbe: {httpGet: {path: /, port: 3000}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec:
  selector: {app: echo}
  ports: [{port: 80, targetPort: 3000}]
---
apiVersion: v1
kind: Pod
metadata: {name: toolbox, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: toolbox
    image: ${busybox}
    imagePullPolicy: Never
    command: [/bin/sleep, "3600"]
`;

const aetherPods = (image: string) => `
apiVersion: v1
kind: Pod
metadata: {name: aether-agent-help, namespace: default}
spec:
  restartPolicy: Never
  containers:
  - {name: agent, image: ${image}, imagePullPolicy: Never, args: [agent/main.ts, --help]}
---
apiVersion: v1
kind: Pod
metadata: {name: aether-envoy-version, namespace: default}
spec:
  restartPolicy: Never
  containers:
  - {name: envoy, image: ${image}, imagePullPolicy: Never, command: [/usr/local/bin/envoy, --version]}
`;

Deno.test({
  name:
    "local cluster: pods from local images, host → pod IP, exec (SPDY), DNS, ClusterIP, clean down",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await ensurePeer("kubectl");
    await withCluster(async (c) => {
      const recorded = JSON.parse(await Deno.readTextFile(paths(c.layout).sysctls));
      try {
        await kubectl(
          c.kubeconfig,
          ["apply", "-f", "-"],
          manifests(imageNames.echoBasic, imageNames.busybox),
        );
        await kubectl(c.kubeconfig, ["rollout", "status", "deployment/echo", "--timeout=180s"]);
        await kubectl(c.kubeconfig, [
          "wait",
          "--for=condition=Ready",
          "pod/toolbox",
          "--timeout=180s",
        ]);

        const pods = JSON.parse(
          await kubectl(c.kubeconfig, ["get", "pods", "-l", "app=echo", "-o", "json"]),
        );
        assert.equal(pods.items.length, 2);
        for (const pod of pods.items) {
          const ip: string = pod.status.podIP;
          assert.match(ip, /^10\.213\.0\.\d+$/, "pod IPs come from the bridge's range");
          const res = await fetch(`http://${ip}:3000/from-host`);
          const body = await res.json();
          assert.equal(res.status, 200);
          assert.equal(
            body.pod,
            pod.metadata.name,
            "the pod itself answered, with its downward-API env",
          );
          assert.equal(body.path, "/from-host");
        }

        // exec over SPDY, stdin included
        const echoed = await kubectl(
          c.kubeconfig,
          ["exec", "-i", "toolbox", "--", "cat"],
          "through exec\n",
        );
        assert.equal(echoed, "through exec\n");

        const svc = JSON.parse(
          await kubectl(c.kubeconfig, ["get", "service", "echo", "-o", "json"]),
        );
        const clusterIp: string = svc.spec.clusterIP;
        assert.match(clusterIp, /^10\.214\.0\.\d+$/);
        const lookup = await kubectl(c.kubeconfig, [
          "exec",
          "toolbox",
          "--",
          "nslookup",
          "echo.default.svc.cluster.local",
        ]);
        assert.ok(lookup.includes(clusterIp), `cluster DNS answers the ClusterIP:\n${lookup}`);
        // The short name through the search domains, to the ClusterIP, through kube-proxy's rules.
        // kube-proxy programs a new Service asynchronously (a CI run once timed out here right
        // after a long test on the same node): a failed answer is asked again for a minute. (No
        // `wget -T`: this image's busybox wget dies of SIGSEGV with it, exit 139, every time.)
        const viaService = await waitFor(
          "echo's ClusterIP answering through kube-proxy",
          () =>
            kubectl(c.kubeconfig, [
              "exec",
              "toolbox",
              "--",
              "wget",
              "-qO-",
              "http://echo/via-service",
            ]),
        );
        const body = JSON.parse(viaService);
        assert.equal(body.path, "/via-service");
        assert.ok(
          pods.items.some((p: { metadata: { name: string } }) => p.metadata.name === body.pod),
        );
        // aether's own image (built here without a registry): the agent and Envoy start from it.
        const aether = await c.importImage("aether");
        // Its /app is the selection (which lib/shipped_closure_test.ts holds to the closure).
        assert.deepEqual(appSources(await archiveLayerPaths(aether)), await imageSources());
        await kubectl(c.kubeconfig, ["apply", "-f", "-"], aetherPods(imageNames.aether));
        for (const pod of ["aether-agent-help", "aether-envoy-version"]) {
          await kubectl(c.kubeconfig, [
            "wait",
            "--for=jsonpath={.status.phase}=Succeeded",
            `pod/${pod}`,
            "--timeout=180s",
          ]);
        }
        const usage = await kubectl(c.kubeconfig, ["logs", "aether-agent-help"]);
        assert.match(usage, /usage: agent standalone/);
        const envoyVersion = await kubectl(c.kubeconfig, ["logs", "aether-envoy-version"]);
        assert.match(envoyVersion, /envoy .*\/1\.40\.0\//);

        const status = await clusterStatus({ dir: c.layout.dir });
        assert.equal(status.up, true);
        assert.ok(
          Object.values(status.daemons).every((pid) => typeof pid === "number"),
          "every daemon runs",
        );

        const during = await readSysctls();
        assert.notDeepEqual(
          during,
          recorded,
          "the kubelet changed the machine's sysctls (restored below)",
        );
      } finally {
        await c.down();
      }
      const after = await clusterStatus({ dir: c.layout.dir });
      assert.equal(after.up, false);
      assert.ok(Object.values(after.daemons).every((pid) => pid === null));
      const left = await leftovers(c.layout, recorded);
      assert.deepEqual(left, {
        processes: [],
        mounts: [],
        podNetns: [],
        links: [],
        netns: false,
        cgroups: [],
        runDirs: [],
        sysctls: [],
      });
      assert.equal(await Deno.stat(join(c.layout.dir)).then(() => true, () => false), false);
    });
  },
});
