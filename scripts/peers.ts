/**
 * `deno task peers ensure <name>…` installs test peers into the project cache; a name may be a
 * peer set (`test`: every peer `deno task test` needs, testbed/peers/sets.ts) or `all`.
 */
import { parseArgs } from "node:util";
import { ensurePeer, peerNames } from "../testbed/peers/mod.ts";
import { expandPeerNames, peerSets } from "../testbed/peers/mod.ts";

const { positionals } = parseArgs({ args: Deno.args, allowPositionals: true });
const [verb, ...names] = positionals;
if (verb !== "ensure" || names.length === 0) {
  const sets = Object.keys(peerSets).join("|");
  console.error(`usage: deno task peers ensure <${peerNames.join("|")}|${sets}|all>…`);
  Deno.exit(2);
}
for (const name of expandPeerNames(names, peerNames)) {
  console.log(`${name}: ${await ensurePeer(name)}`);
}
