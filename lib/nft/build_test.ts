import assert from "node:assert/strict";
import {
  type CaptureSpec,
  deleteTable,
  listTable,
  type NftCommand,
  NftSpecError,
  replaceTable,
  syncSets,
} from "./mod.ts";

const vips = [
  { address: "10.96.0.10", port: 80 },
  { address: "fd00::10", port: 80 },
  { address: "10.96.0.9", port: 443 },
  { address: "10.96.0.10", port: 8080 },
];
const dns = {
  servers: ["10.96.0.53", "fd00::53"],
  addresses: ["192.0.2.1", "2001:db8::1"],
  port: 18054,
};

/** The commands of a document as `<verb> <object> [<name>]` lines. */
const outline = (cmds: NftCommand[]) =>
  cmds.map((c) => {
    const [verb, body] = Object.entries(c)[0] as [string, Record<string, Record<string, unknown>>];
    const [what, o] = Object.entries(body)[0];
    return [verb, what, o.name ?? o.chain ?? ""].join(" ").trim();
  });

Deno.test("replaceTable: one batch that replaces the table whether or not it exists", () => {
  assert.deepEqual(outline(replaceTable({ vips, capturePort: 15001, dns }).nftables), [
    "add table aether",
    "delete table aether",
    "add table aether",
    "add set mesh-vips4",
    "add set mesh-vips6",
    "add set dns-servers4",
    "add set dns-servers6",
    "add chain output",
    "add rule output",
    "add rule output",
    "add rule output",
    "add rule output",
    "add element mesh-vips4",
    "add element mesh-vips6",
    "add element dns-servers4",
    "add element dns-servers6",
  ]);
});

Deno.test("replaceTable: no VIP makes empty sets (no element command), rules still there", () => {
  assert.deepEqual(outline(replaceTable({ vips: [], capturePort: 15001 }).nftables).slice(3), [
    "add set mesh-vips4",
    "add set mesh-vips6",
    "add chain output",
    "add rule output",
    "add rule output",
  ]);
});

Deno.test("replaceTable: IPv6 only fills only the IPv6 set", () => {
  const doc = replaceTable({ vips: [{ address: "fd00::a", port: 80 }], capturePort: 15001 });
  const elems = doc.nftables.filter((c) => "add" in c && "element" in (c.add as object));
  assert.deepEqual(elems, [{
    add: {
      element: {
        family: "inet",
        table: "aether",
        name: "mesh-vips6",
        elem: [{ concat: ["fd00::a", 80] }],
      },
    },
  }]);
});

Deno.test("replaceTable: the same document for any order and duplicates of the same spec", () => {
  const want = JSON.stringify(replaceTable({ vips, capturePort: 15001, dns }));
  for (const perm of [[3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1, 0, 2]]) {
    const spec: CaptureSpec = {
      vips: perm.map((i) => ({ ...vips[i] })),
      capturePort: 15001,
      dns: { ...dns, servers: [...dns.servers].reverse(), addresses: [...dns.addresses].reverse() },
    };
    assert.equal(JSON.stringify(replaceTable(spec)), want, perm.join());
  }
});

Deno.test("replaceTable: an invalid spec throws before any document exists", () => {
  assert.throws(
    () => replaceTable({ vips: [{ address: "10.96.0.300", port: 80 }], capturePort: 15001 }),
    NftSpecError,
  );
});

Deno.test("deleteTable and listTable", () => {
  const t = { table: { family: "inet", name: "aether" } };
  assert.deepEqual(deleteTable(), { nftables: [{ add: t }, { delete: t }] });
  assert.deepEqual(listTable(), { nftables: [{ list: t }] });
});

Deno.test("syncSets: adds what is new, deletes only what the old spec had", () => {
  const from: CaptureSpec = { vips: vips.slice(0, 2), capturePort: 15001 };
  const to: CaptureSpec = { vips: vips.slice(1), capturePort: 15001 };
  const doc = syncSets(from, to)!;
  assert.deepEqual(outline(doc.nftables), ["add element mesh-vips4", "delete element mesh-vips4"]);
  const elem = (i: number) =>
    (Object.values(doc.nftables[i])[0] as { element: { elem: unknown } })
      .element.elem;
  assert.deepEqual(elem(0), [{ concat: ["10.96.0.9", 443] }, { concat: ["10.96.0.10", 8080] }]);
  assert.deepEqual(elem(1), [{ concat: ["10.96.0.10", 80] }]);
});

Deno.test("syncSets: duplicates in either spec give one element each, nothing to do is empty", () => {
  const from: CaptureSpec = { vips: [vips[0], vips[0], vips[1]], capturePort: 15001, dns };
  const to: CaptureSpec = { vips: [vips[1], vips[0]], capturePort: 15001, dns };
  assert.deepEqual(syncSets(from, to), { nftables: [] });
  const gone = syncSets(from, { vips: [vips[1]], capturePort: 15001, dns })!;
  assert.deepEqual(gone.nftables, [{
    delete: {
      element: {
        family: "inet",
        table: "aether",
        name: "mesh-vips4",
        elem: [{ concat: ["10.96.0.10", 80] }],
      },
    },
  }]);
});

Deno.test("syncSets: DNS servers of a kept family sync; anything else needs a replace", () => {
  const a: CaptureSpec = { vips: [], capturePort: 15001, dns };
  const swapped = syncSets(a, { ...a, dns: { ...dns, servers: ["10.96.0.54", "fd00::53"] } })!;
  assert.deepEqual(outline(swapped.nftables), [
    "add element dns-servers4",
    "delete element dns-servers4",
  ]);
  const replace: CaptureSpec[] = [
    { ...a, capturePort: 15002 },
    { vips: [], capturePort: 15001 },
    { ...a, dns: { ...dns, port: 53 } },
    { ...a, dns: { ...dns, addresses: ["192.0.2.2", "2001:db8::1"] } },
    { ...a, dns: { ...dns, servers: ["10.96.0.53"] } },
  ];
  for (const to of replace) assert.equal(syncSets(a, to), undefined, JSON.stringify(to));
  assert.equal(syncSets({ vips: [], capturePort: 15001 }, a), undefined);
});
