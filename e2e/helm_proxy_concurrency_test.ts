/**
 * charts/aether's node proxy runs Envoy with `--concurrency` from agent.proxyConcurrency (2 by
 * default, not Envoy's every-CPU-of-the-node); values that are not a worker count refuse to
 * render. Rendered with the real helm; the rendered command line is what the cluster lane runs.
 */
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer, projectRoot } from "../testbed/peers/mod.ts";
import { exec } from "./peers/proc.ts";

const chart = join(projectRoot, "charts", "aether");

async function envoyCommand(sets: string[]): Promise<{ code: number; text: string }> {
  const helm = await ensurePeer("helm");
  const r = await exec(helm, ["template", "aether", chart, "--set=agent.gamma=true", ...sets]);
  if (r.code !== 0) return { code: r.code, text: r.stderr };
  // deno-lint-ignore no-explicit-any
  const docs: any[] = parseAllDocuments(r.stdout).map((d) => d.toJS()).filter(Boolean);
  const proxy = docs.find((d) => d.kind === "DaemonSet" && d.metadata.name === "aether-node-proxy");
  const envoy = proxy.spec.template.spec.containers.find((c: { name: string }) =>
    c.name === "envoy"
  );
  return { code: 0, text: envoy.args.join(" ") };
}

Deno.test("helm chart: the node proxy's Envoy workers from agent.proxyConcurrency", async () => {
  const byDefault = await envoyCommand([]);
  assertEquals(byDefault.code, 0, byDefault.text);
  assert(/exec envoy .*--concurrency 2(\s|$)/.test(byDefault.text), byDefault.text);
  const four = await envoyCommand(["--set=agent.proxyConcurrency=4"]);
  assert(/--concurrency 4(\s|$)/.test(four.text), four.text);
  for (const bad of ["0", "1.5", "abc", "2000"]) {
    const r = await envoyCommand([`--set=agent.proxyConcurrency=${bad}`]);
    assert(r.code !== 0, `${bad} rendered`);
    assert(r.text.includes("agent.proxyConcurrency"), r.text);
  }
});
