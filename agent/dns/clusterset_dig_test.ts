/**
 * The clusterset zone answered with the real `dig` (Debian dnsutils): a responder of a clusterset
 * answers `<name>.<ns>.svc.clusterset.local` (A, AAAA, SRV) beside its mesh names, an unknown
 * clusterset name is NXDOMAIN with the clusterset zone's own SOA, and a responder outside a
 * clusterset forwards those names like any other.
 */
import assert from "node:assert/strict";
import { dig, parseDig, startResponder } from "./_test_utils.ts";

Deno.test("dig: clusterset.local names beside the mesh zone", async (t) => {
  const records = {
    "web.mesh.internal": { a: ["10.96.0.10"], aaaa: [] },
    "web.shop.svc.clusterset.local": {
      a: ["10.96.7.7"],
      aaaa: ["fd00::7"],
      srv: [{ service: "http", proto: "tcp", port: 80 }],
    },
    "dns-version.clusterset.local": { a: [], aaaa: [], txt: ["1.0.0"] },
  };
  const { responder, port } = await startResponder({ extraZones: ["clusterset.local"], records });
  const outside = await startResponder({ records });
  const q = async (p: number, ...args: string[]) =>
    parseDig(await dig(["@127.0.0.1", "-p", String(p), "+tries=1", "+time=3", ...args]));
  try {
    await t.step("A and AAAA of an import, authoritative", async () => {
      const a = await q(port, "web.shop.svc.clusterset.local", "A");
      assert.equal(a.status, "NOERROR");
      assert.ok(a.flags.includes("aa"), a.raw);
      assert.match(
        a.answer[0],
        /^web\.shop\.svc\.clusterset\.local\.\s+5\s+IN\s+A\s+10\.96\.7\.7$/,
      );
      const aaaa = await q(port, "web.shop.svc.clusterset.local", "AAAA");
      assert.match(aaaa.answer[0], /IN\s+AAAA\s+fd00::7$/);
    });
    await t.step("the zone's dns-version TXT", async () => {
      const r = await q(port, "dns-version.clusterset.local", "TXT");
      assert.equal(r.status, "NOERROR");
      assert.match(r.answer[0], /^dns-version\.clusterset\.local\.\s+5\s+IN\s+TXT\s+"1\.0\.0"$/);
    });
    await t.step("SRV of a named port", async () => {
      const r = await q(port, "_http._tcp.web.shop.svc.clusterset.local", "SRV");
      assert.equal(r.status, "NOERROR");
      assert.match(r.answer[0], /IN\s+SRV\s+\d+\s+\d+\s+80\s+web\.shop\.svc\.clusterset\.local\.$/);
    });
    await t.step(
      "an unknown import: NXDOMAIN with the clusterset SOA; mesh names still answer",
      async () => {
        const r = await q(port, "gone.shop.svc.clusterset.local", "A");
        assert.equal(r.status, "NXDOMAIN");
        assert.match(
          r.authority[0],
          /^clusterset\.local\.\s+5\s+IN\s+SOA\s+ns\.clusterset\.local\./,
        );
        const m = await q(port, "web.mesh.internal", "A");
        assert.match(m.answer[0], /IN\s+A\s+10\.96\.0\.10$/);
      },
    );
    await t.step(
      "outside a clusterset the name is not ours (forwarded: no upstream, SERVFAIL)",
      async () => {
        const r = await q(outside.port, "web.shop.svc.clusterset.local", "A");
        assert.equal(r.status, "SERVFAIL");
        assert.ok(!r.flags.includes("aa"), r.raw);
      },
    );
  } finally {
    await responder.close();
    await outside.responder.close();
  }
});
