/**
 * The conformance suite's other images on the local cluster: echo-advanced (Istio's echo server,
 * its `client` run through `kubectl exec` over SPDY to a Service name) and the trimmed CoreDNS
 * under its upstream name, both built here without a registry.
 */
import assert from "node:assert/strict";
import { imageNames, withCluster } from "../testbed/cluster/mod.ts";
import { kubectl } from "./kubectl.ts";

/** The conformance suite's other two images: Istio's echo (echo-advanced) and CoreDNS. */
const conformanceImagePods = (echoAdvanced: string, coredns: string) => `
apiVersion: v1
kind: Pod
metadata: {name: echo-advanced, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: echo
    image: ${echoAdvanced}
    imagePullPolicy: Never
    args: [--port=8080, --crt=/cert.crt, --key=/cert.key]
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns-test, namespace: default}
data:
  Corefile: |
    .:5353 {
        ready :8181
        errors
        whoami
    }
---
apiVersion: v1
kind: Pod
metadata: {name: coredns-test, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: coredns
    image: ${coredns}
    imagePullPolicy: Never
    args: [-conf, /etc/coredns/Corefile]
    readinessProbe: {httpGet: {path: /ready, port: 8181}, periodSeconds: 1}
    volumeMounts: [{name: config, mountPath: /etc/coredns}]
  volumes: [{name: config, configMap: {name: coredns-test}}]
`;

const echoService = (echoBasic: string) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo, namespace: default}
spec:
  replicas: 1
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      containers:
      - {name: echo, image: ${echoBasic}, imagePullPolicy: Never, ports: [{containerPort: 3000}]}
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: default}
spec:
  selector: {app: echo}
  ports: [{port: 80, targetPort: 3000}]
`;

Deno.test({
  name: "local cluster: echo-advanced (Istio echo server + client over exec) and CoreDNS images",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await withCluster(async (c) => {
      try {
        await kubectl(c.kubeconfig, ["apply", "-f", "-"], echoService(imageNames.echoBasic));
        await kubectl(c.kubeconfig, ["rollout", "status", "deployment/echo", "--timeout=180s"]);
        // echo-advanced (Istio's echo server; its client over exec) and CoreDNS from local images.
        await c.importImage("echoAdvanced");
        await c.importImage("coredns");
        await kubectl(
          c.kubeconfig,
          ["apply", "-f", "-"],
          conformanceImagePods(imageNames.echoAdvanced, imageNames.coredns),
        );
        for (const pod of ["echo-advanced", "coredns-test"]) {
          await kubectl(c.kubeconfig, [
            "wait",
            "--for=condition=Ready",
            `pod/${pod}`,
            "--timeout=180s",
          ]);
        }
        const advIp =
          JSON.parse(await kubectl(c.kubeconfig, ["get", "pod", "echo-advanced", "-o", "json"]))
            .status.podIP;
        const adv = await (await fetch(`http://${advIp}:8080/`)).text();
        assert.match(adv, /Hostname=echo-advanced/);
        const clientOut = await kubectl(c.kubeconfig, [
          "exec",
          "echo-advanced",
          "--",
          "client",
          "http://echo/from-istio-client",
        ]);
        assert.match(clientOut, /\[0\] StatusCode=200/);
      } finally {
        await c.down();
      }
    });
  },
});
