/**
 * `deno task cluster up|down|status|import <image>…`: the local one-node Kubernetes
 * (testbed/cluster, docs/kubernetes.md); `up --second` also the second cluster beside it
 * (scripts/second_cluster.ts, docs/multicluster.md). Needs root.
 */
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import {
  clusterDown,
  clusterStatus,
  clusterUp,
  defaultClusterDir,
  type ImageKey,
  imageNames,
  withCluster,
} from "../testbed/cluster/mod.ts";
import { secondDown, secondLayout, secondStatus, secondUp } from "./second_cluster.ts";

const usage = `usage: deno task cluster <up|down|status|import> [--dir DIR] [--image KEY]…
  up       bring the cluster up (or reuse it) and print its kubeconfig path
           --second: and a second cluster beside it (its own control plane, a kwok node whose
           pods run as processes on its bridge 10.217.0.0/24, routed to the first's pods);
           --cni-socket PATH: its pods chained to aether's CNI plugin of a node agent there
  down     stop both and remove every trace (processes, mounts, cgroups, links, netns, sysctls)
  status   say what runs
  import   build and import images into the running cluster (--image KEY, repeatable)
images: ${Object.keys(imageNames).join(", ")}`;

const { positionals, values } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: {
    dir: { type: "string" },
    image: { type: "string", multiple: true },
    second: { type: "boolean" },
    "cni-socket": { type: "string" },
  },
});
const [verb] = positionals;
const images = (values.image ?? []) as ImageKey[];
for (const k of images) {
  if (!(k in imageNames)) {
    console.error(`unknown image ${k}\n${usage}`);
    Deno.exit(2);
  }
}
if (Deno.uid?.() !== 0) {
  console.error("the local cluster needs root (network namespaces, mounts, cgroups)");
  Deno.exit(1);
}
const log = new Logger("cluster");
const opts = { dir: values.dir, log, images: images.length ? images : undefined };
const second = secondLayout(values.dir ?? defaultClusterDir);
switch (verb) {
  case "up": {
    const c = await clusterUp(opts);
    console.log(`cluster up: API server ${c.server}`);
    console.log(`kubeconfig: ${c.kubeconfig}`);
    console.log(`try: KUBECONFIG=${c.kubeconfig} kubectl get nodes -o wide`);
    if (values.second) {
      const s = await secondUp(second, values["cni-socket"]);
      console.log(
        `second cluster up: API server ${s.server}, node ${s.nodeName}, pods ${s.podCidr}`,
      );
      console.log(`second kubeconfig: ${s.kubeconfig}`);
    }
    break;
  }
  case "down":
    await secondDown(second);
    await clusterDown(opts);
    console.log("cluster down: nothing left behind");
    break;
  case "status":
    console.log(
      JSON.stringify({ ...await clusterStatus(opts), second: await secondStatus(second) }, null, 2),
    );
    break;
  case "import":
    await withCluster(async (c) => {
      for (const k of images) await c.importImage(k);
    }, { ...opts, images: undefined });
    break;
  default:
    console.error(usage);
    Deno.exit(2);
}
