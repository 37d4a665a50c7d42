import assert from "node:assert/strict";
import { NftParseError, normalizeSpec, parseTable, sameSpec } from "./mod.ts";

/** A listing recorded from nft 1.0.6 (`nft -j list table inet aether`) in testdata/. */
const listed = (name: string) =>
  Deno.readTextFileSync(new URL(`./testdata/listed_${name}.json`, import.meta.url));

Deno.test("parseTable: a table the builder made reads back as its spec, with counters", () => {
  const t = parseTable(listed("dual_stack"))!;
  assert.deepEqual(t.problems, []);
  const want = normalizeSpec({
    vips: [
      { address: "10.96.0.11", port: 8080 },
      { address: "10.96.0.10", port: 80 },
      { address: "fd00::10", port: 80 },
    ],
    capturePort: 15001,
    dns: {
      servers: ["fd00::53", "10.96.0.53"],
      addresses: ["2001:db8::1", "192.0.2.1"],
      port: 18054,
    },
  });
  assert.ok(sameSpec(t.spec, want), JSON.stringify(t.spec));
  // The recording connected once to 10.96.0.10:80: one SYN through the IPv4 capture rule.
  assert.deepEqual(t.counters, { vips: { packets: 1, bytes: 60 }, dns: { packets: 0, bytes: 0 } });
  assert.equal(typeof t.handle, "number");
});

Deno.test("parseTable: empty sets read back as no VIP", () => {
  const t = parseTable(listed("empty"))!;
  assert.deepEqual(t.problems, []);
  assert.deepEqual(t.spec, { vips: [], capturePort: 15001 });
});

Deno.test("parseTable: another table is no table", () => {
  assert.equal(parseTable(listed("other_table")), undefined);
  assert.equal(parseTable({ nftables: [{ metainfo: { version: "1.0.6" } }] }), undefined);
});

Deno.test("parseTable: rules, sets and chains added by hand are problems", () => {
  const t = parseTable(listed("foreign"))!;
  assert.deepEqual(t.spec, { vips: [{ address: "10.96.0.10", port: 80 }], capturePort: 15001 });
  assert.equal(t.problems.length, 3, t.problems.join("; "));
  assert.ok(t.problems.some((p) => /^foreign set extra$/.test(p)), t.problems.join("; "));
  assert.ok(t.problems.some((p) => /^foreign chain mine$/.test(p)), t.problems.join("; "));
  assert.ok(t.problems.some((p) => /^foreign rule in chain output/.test(p)), t.problems.join("; "));
});

Deno.test("parseTable: a rule replaced by hand (other port, other place) is a problem", () => {
  // The IPv6 capture rule was deleted and inserted first, redirecting to :15002.
  const t = parseTable(listed("reordered"))!;
  assert.deepEqual(t.problems, [
    "rules out of order: vips6, vips4",
    "capture rules differ in port",
  ]);
});

Deno.test("parseTable: missing pieces and elements with extras", () => {
  const ref = { family: "inet", table: "aether" };
  const doc = {
    nftables: [
      { table: { family: "inet", name: "aether", handle: 9 } },
      {
        set: {
          ...ref,
          name: "mesh-vips4",
          type: ["ipv4_addr", "inet_service"],
          elem: [{ elem: { val: { concat: ["10.0.0.1", 80] }, comment: "x" } }],
        },
      },
      { set: { ...ref, name: "dns-servers4", type: "ipv4_addr", elem: ["10.0.0.53"] } },
      { chain: { ...ref, name: "output", type: "filter", hook: "output", prio: 0 } },
    ],
  };
  const t = parseTable(doc)!;
  assert.deepEqual(t.spec, { vips: [{ address: "10.0.0.1", port: 80 }], capturePort: 0 });
  assert.deepEqual(t.problems, [
    "chain output is not nat hook output prio -100",
    "capture rule for mesh-vips4 missing",
    "set mesh-vips6 missing",
    "capture rule for mesh-vips6 missing",
    "set dns-servers4 without its rule",
  ]);
  assert.equal(t.handle, 9);
});

Deno.test("parseTable: what is not a libnftables listing throws", () => {
  assert.throws(() => parseTable("{nope"), NftParseError);
  assert.throws(() => parseTable('{"x": []}'), NftParseError);
  assert.throws(() => parseTable([]), NftParseError);
});

Deno.test("parseTable: l4proto listed by number (6, 17) reads back as by name", () => {
  // libnftables lists a protocol by number when it does not resolve the name: the node agent saw
  // `{"set": [6, 17]}` for some pods and replaced their tables every 30 s as drifted.
  const byName = listed("dual_stack");
  const byNumber = byName.replace(/"set":\s*\[\s*"tcp",\s*"udp"\s*\]/g, '"set": [6, 17]');
  assert.notEqual(byNumber, byName);
  const a = parseTable(byName)!, b = parseTable(byNumber)!;
  assert.deepEqual(b.problems, []);
  assert.ok(sameSpec(a.spec, b.spec), JSON.stringify(b.spec));
  // Another number is still not ours.
  const other = byName.replace(/"set":\s*\[\s*"tcp",\s*"udp"\s*\]/g, '"set": [6, 132]');
  assert.ok(parseTable(other)!.problems.some((p) => p.startsWith("foreign rule")));
});
