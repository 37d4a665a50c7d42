/**
 * End-to-end answers checked with the real `dig` (Debian dnsutils) over UDP and TCP, forwarding to
 * a real unbound started on loopback.
 */
import assert from "node:assert/strict";
import {
  dig,
  freePort,
  parseDig,
  shortAnswers,
  startResponder,
  startUnbound,
} from "./_test_utils.ts";

const bigTxt = Array.from(
  { length: 12 },
  (_, i) => `"${String(i).padStart(2, "0")}${"x".repeat(240)}"`,
);

Deno.test("dig: mesh answers, forwarding, truncation, SERVFAIL and EDNS0", async (t) => {
  const upstream = await startUnbound({
    server: [
      'local-zone: "ext.test." static',
      'local-data: "ext.test. 300 IN SOA ns.ext.test. root.ext.test. 1 3600 600 86400 60"',
      'local-data: "host.ext.test. 300 IN A 192.0.2.7"',
      'local-data: "nodata.ext.test. 300 IN A 192.0.2.8"',
      ...bigTxt.map((s) => `local-data: 'big.ext.test. 300 IN TXT ${s}'`),
      'local-zone: "cluster.local." static',
      'local-data: "web.mesh.internal.ns.svc.cluster.local. 300 IN A 10.1.2.3"',
    ],
  });
  const big = Array.from({ length: 40 }, (_, i) => `10.96.1.${i + 1}`);
  const { responder, port, registry } = await startResponder({
    upstreams: [`127.0.0.1:${upstream.port}`],
    records: {
      "web.mesh.internal": { a: ["10.96.0.10"], aaaa: [] },
      "dual.mesh.internal": { a: ["10.96.0.11"], aaaa: ["fd00::11"] },
      "big.mesh.internal": { a: big, aaaa: [] },
    },
  });
  const q = async (...args: string[]) =>
    parseDig(await dig(["@127.0.0.1", "-p", String(port), "+tries=1", "+time=3", ...args]));
  try {
    for (const proto of ["+notcp", "+tcp"]) {
      const wantTransport = proto === "+tcp" ? "TCP" : "UDP";
      await t.step(`A over ${wantTransport}`, async () => {
        const r = await q("web.mesh.internal", "A", proto);
        assert.equal(r.status, "NOERROR");
        assert.equal(r.transport, wantTransport);
        assert.ok(r.flags.includes("aa"), r.raw);
        assert.equal(r.answer.length, 1);
        assert.match(r.answer[0], /^web\.mesh\.internal\.\s+5\s+IN\s+A\s+10\.96\.0\.10$/);
      });
      await t.step(`AAAA NODATA with SOA over ${wantTransport}`, async () => {
        const r = await q("web.mesh.internal", "AAAA", proto);
        assert.equal(r.status, "NOERROR");
        assert.equal(r.answer.length, 0);
        assert.match(r.authority[0], /^mesh\.internal\.\s+5\s+IN\s+SOA\s+ns\.mesh\.internal\./);
        const d = await q("dual.mesh.internal", "AAAA", proto);
        assert.match(d.answer[0], /IN\s+AAAA\s+fd00::11$/);
      });
      for (const type of ["MX", "TXT"]) {
        await t.step(`${type} NODATA over ${wantTransport}`, async () => {
          const r = await q("web.mesh.internal", type, proto);
          assert.equal(r.status, "NOERROR");
          assert.equal(r.answer.length, 0);
          assert.match(r.authority[0], /IN\s+SOA/);
        });
      }
      await t.step(`NXDOMAIN with SOA over ${wantTransport}`, async () => {
        const r = await q("nope.mesh.internal", "A", proto);
        assert.equal(r.status, "NXDOMAIN");
        assert.ok(r.flags.includes("aa"));
        assert.match(r.authority[0], /^mesh\.internal\.\s+5\s+IN\s+SOA\s+.* 1 60 10 3600 5$/);
      });
      await t.step(`mixed case over ${wantTransport}`, async () => {
        const r = await q("WeB.MeSh.InTeRnAl", "A", proto);
        assert.equal(r.status, "NOERROR");
        assert.match(r.answer[0], /^WeB\.MeSh\.InTeRnAl\.\s+5\s+IN\s+A\s+10\.96\.0\.10$/);
      });
      await t.step(`forwarded name answered by unbound over ${wantTransport}`, async () => {
        const r = await q("host.ext.test", "A", proto);
        assert.equal(r.status, "NOERROR");
        assert.match(r.answer[0], /^host\.ext\.test\.\s+\d+\s+IN\s+A\s+192\.0\.2\.7$/);
        const nx = await q("missing.ext.test", "A", proto);
        assert.equal(nx.status, "NXDOMAIN");
        assert.match(nx.authority[0] ?? "", /SOA/);
      });
      await t.step(
        `search-path suffixed mesh name is forwarded over ${wantTransport}`,
        async () => {
          const r = await q("web.mesh.internal.ns.svc.cluster.local", "A", proto);
          assert.equal(r.status, "NOERROR");
          assert.match(r.answer[0], /IN\s+A\s+10\.1\.2\.3$/, "the upstream's record, not a VIP");
        },
      );
    }

    await t.step("large mesh answer: truncated over UDP, dig retries over TCP", async () => {
      const r = await q("big.mesh.internal", "A", "+noedns");
      assert.ok(r.truncatedRetry, r.raw);
      assert.equal(r.transport, "TCP");
      assert.equal(r.answer.length, 40);
      const udp = await q("big.mesh.internal", "A", "+noedns", "+ignore");
      assert.ok(udp.flags.includes("tc"));
      assert.equal(udp.answer.length, 0);
    });

    await t.step("large forwarded answer: upstream TC → TCP, then client TC → TCP", async () => {
      const r = await q("big.ext.test", "TXT");
      assert.ok(r.truncatedRetry, r.raw);
      assert.equal(r.status, "NOERROR");
      assert.equal(r.answer.length, bigTxt.length);
      assert.equal(responder.metrics.forwardSeconds.count({ result: "ok", transport: "tcp" }), 1);
    });

    await t.step("EDNS0: +bufsize lifts the 512 limit, OPT echoed, passed through", async () => {
      const r = await q("big.mesh.internal", "A", "+bufsize=1232", "+ignore");
      assert.ok(!r.flags.includes("tc"), r.raw);
      assert.equal(r.answer.length, 40);
      assert.match(r.opt ?? "", /version: 0, flags:; udp: 1232/);
      const dnssec = await q("web.mesh.internal", "A", "+dnssec");
      assert.match(dnssec.opt ?? "", /flags: do;/);
      const noedns = await q("web.mesh.internal", "A", "+noedns");
      assert.equal(noedns.opt, undefined);
      const fwd = await q("host.ext.test", "A", "+bufsize=1400", "+nsid");
      assert.equal(fwd.status, "NOERROR");
      assert.ok(fwd.opt, "the upstream's OPT comes back to an EDNS client");
      const badvers = await q("web.mesh.internal", "A", "+edns=1", "+noednsneg");
      assert.equal(badvers.status, "BADVERS");
    });

    await t.step("SERVFAIL when every upstream is dead; timeout moves to the next", async () => {
      const dead = await freePort();
      const s = await startResponder({ upstreams: [`127.0.0.1:${dead}`], forwardTimeoutMs: 300 });
      const s2 = await startResponder({
        upstreams: ["127.0.0.9:" + dead, `127.0.0.1:${upstream.port}`],
        forwardTimeoutMs: 300,
      });
      try {
        for (const proto of ["+notcp", "+tcp"]) {
          const r = parseDig(
            await dig(["@127.0.0.1", "-p", String(s.port), "+tries=1", proto, "host.ext.test"]),
          );
          assert.equal(r.status, "SERVFAIL");
        }
        const ok = parseDig(await dig(["@127.0.0.1", "-p", String(s2.port), "host.ext.test"]));
        assert.equal(ok.status, "NOERROR");
        const m = s2.registry.render();
        assert.match(
          m,
          /aether_dns_forward_duration_seconds_count\{result="(timeout|error)",transport="udp"\} 1/,
        );
      } finally {
        await s.responder.close();
        await s2.responder.close();
      }
    });

    await t.step("records update is visible to the next query", async () => {
      responder.setRecords({ "web.mesh.internal": { a: ["10.96.9.9"], aaaa: [] } });
      const r = await q("web.mesh.internal", "A");
      assert.match(r.answer[0], /10\.96\.9\.9$/);
      assert.equal((await q("dual.mesh.internal", "A")).status, "NXDOMAIN");
    });

    await t.step("metrics: queries by type and rcode, cache hits, forward latency", () => {
      responder.metrics.flush();
      const m = registry.render();
      assert.match(m, /aether_dns_queries_total\{rcode="NOERROR",source="mesh",type="A"\} \d+/);
      assert.match(m, /aether_dns_queries_total\{rcode="NXDOMAIN",source="mesh",type="A"\} \d+/);
      assert.match(m, /aether_dns_queries_total\{rcode="NOERROR",source="mesh",type="MX"\} 2/);
      assert.match(m, /aether_dns_cache_hits_total [1-9]/);
      assert.match(
        m,
        /aether_dns_forward_duration_seconds_count\{result="ok",transport="udp"\} [1-9]/,
      );
      assert.match(m, /aether_dns_truncated_total [1-9]/);
    });
  } finally {
    await responder.close();
    await upstream.stop();
  }
});

Deno.test("shortAnswers: a retry's remark is not an answer; the retry's answer is", () => {
  const out = [
    "10.0.0.1",
    ";; communications error to 127.0.0.1#5353: timed out",
    "10.0.0.1",
    ";; connection timed out; no servers could be reached",
    "",
  ].join("\n");
  assert.deepEqual(shortAnswers(out), ["10.0.0.1", "10.0.0.1"]);
});
