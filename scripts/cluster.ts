/**
 * `deno task cluster up|down|status|import <image>…`: the local one-node Kubernetes
 * (testbed/cluster, docs/kubernetes.md). Needs root.
 */
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import {
  clusterDown,
  clusterStatus,
  clusterUp,
  type ImageKey,
  imageNames,
  withCluster,
} from "../testbed/cluster/mod.ts";

const usage = `usage: deno task cluster <up|down|status|import> [--dir DIR] [--image KEY]…
  up       bring the cluster up (or reuse it) and print its kubeconfig path
  down     stop it and remove every trace (processes, mounts, cgroups, links, netns, sysctls)
  status   say what runs
  import   build and import images into the running cluster (--image KEY, repeatable)
images: ${Object.keys(imageNames).join(", ")}`;

const { positionals, values } = parseArgs({
  args: Deno.args,
  allowPositionals: true,
  options: { dir: { type: "string" }, image: { type: "string", multiple: true } },
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
switch (verb) {
  case "up": {
    const c = await clusterUp(opts);
    console.log(`cluster up: API server ${c.server}`);
    console.log(`kubeconfig: ${c.kubeconfig}`);
    console.log(`try: KUBECONFIG=${c.kubeconfig} kubectl get nodes -o wide`);
    break;
  }
  case "down":
    await clusterDown(opts);
    console.log("cluster down: nothing left behind");
    break;
  case "status":
    console.log(JSON.stringify(await clusterStatus(opts), null, 2));
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
