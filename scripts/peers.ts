/** `deno task peers ensure <name>…` installs test peers into the project cache. */
import { parseArgs } from "node:util";
import { ensurePeer, peerNames } from "../testbed/peers/mod.ts";

const { positionals } = parseArgs({ args: Deno.args, allowPositionals: true });
const [verb, ...names] = positionals;
if (verb !== "ensure" || names.length === 0) {
  console.error(`usage: deno task peers ensure <${peerNames.join("|")}|all>…`);
  Deno.exit(2);
}
for (const name of names[0] === "all" ? peerNames : names) {
  console.log(`${name}: ${await ensurePeer(name)}`);
}
