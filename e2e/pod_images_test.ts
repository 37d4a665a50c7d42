/**
 * What a process pod runs (e2e/pod_images.ts): image references to their repository, a Pod's
 * containers to command lines and environments, and the refusals (with their reasons) for what
 * cannot run here. Pure: no peer is ensured.
 */
import { assertEquals } from "../testbed/assert.ts";
import { containerRuns, imageRepository } from "./pod_images.ts";

const images = new Map([
  ["gcr.io/k8s-staging-gateway-api/echo-basic", { command: "/bin/echo-basic" }],
  ["registry.k8s.io/pause", { command: "/bin/pause", env: { FROM_IMAGE: "1", X: "image" } }],
]);

const pod = (containers: unknown[]) => ({
  metadata: { name: "web-1", namespace: "shop", uid: "u-1" },
  spec: { nodeName: "node-b", containers },
  status: { podIP: "10.1.2.130" },
});

Deno.test("imageRepository drops the tag and the digest, not a registry port", () => {
  assertEquals(imageRepository("registry.k8s.io/pause:3.10"), "registry.k8s.io/pause");
  assertEquals(imageRepository("localhost:5000/echo"), "localhost:5000/echo");
  assertEquals(imageRepository("localhost:5000/echo:v1@sha256:abc"), "localhost:5000/echo");
  assertEquals(imageRepository("busybox"), "busybox");
});

Deno.test("containerRuns: the image's binary, the container's args, env values and fieldRefs", () => {
  const runs = containerRuns(
    {
      ...pod([{
        name: "echo",
        image: "gcr.io/k8s-staging-gateway-api/echo-basic:v1.5.1",
        args: ["--x", 1],
        env: [
          { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
          { name: "NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
          { name: "SA", valueFrom: { fieldRef: { fieldPath: "spec.serviceAccountName" } } },
          { name: "IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
          { name: "PLAIN", value: "v" },
          { name: "EMPTY" },
        ],
      }, { name: "side", image: "registry.k8s.io/pause:3.10", env: [{ name: "X", value: "c" }] }]),
    },
    images,
  );
  assertEquals(runs, [
    {
      name: "echo",
      command: "/bin/echo-basic",
      args: ["--x", "1"],
      env: {
        POD_NAME: "web-1",
        NAMESPACE: "shop",
        SA: "default",
        IP: "10.1.2.130",
        PLAIN: "v",
        EMPTY: "",
      },
    },
    { name: "side", command: "/bin/pause", args: [], env: { FROM_IMAGE: "1", X: "c" } },
  ]);
});

Deno.test("containerRuns refuses what cannot run here, saying why", () => {
  const refused = (containers: unknown[]) => {
    const r = containerRuns(pod(containers), images);
    return typeof r === "string" ? r : `ran: ${JSON.stringify(r)}`;
  };
  assertEquals(
    refused([{ name: "web", image: "docker.io/library/nginx:1" }]),
    'image "docker.io/library/nginx:1" of container web is not on the allowlist ' +
      "(gcr.io/k8s-staging-gateway-api/echo-basic, registry.k8s.io/pause)",
  );
  assertEquals(
    refused([{ name: "p", image: "registry.k8s.io/pause:3.10", command: ["/bin/sh"] }]),
    "container p sets command; only the image's own binary runs here",
  );
  const secret = { name: "S", valueFrom: { secretKeyRef: { name: "s", key: "k" } } };
  assertEquals(
    refused([{ name: "p", image: "registry.k8s.io/pause:3.10", env: [secret] }]).split(":")[0],
    "env S of container p",
  );
  const limits = { name: "L", valueFrom: { resourceFieldRef: { resource: "limits.cpu" } } };
  assertEquals(
    refused([{ name: "p", image: "registry.k8s.io/pause:3.10", env: [limits] }]).split(":")[0],
    "env L of container p",
  );
  assertEquals(refused([]), "the pod has no containers");
});
