import assert from "node:assert/strict";
import { type CaptureSpec, NftSpecError, normalizeSpec, sameSpec } from "./mod.ts";

const base: CaptureSpec = { vips: [], capturePort: 15001 };

Deno.test("normalizeSpec: sorted, each once, nft's address text, DNS without servers dropped", () => {
  const got = normalizeSpec({
    vips: [
      { address: "FD00::0:10", port: 80 },
      { address: "10.96.0.10", port: 8080 },
      { address: "10.96.0.10", port: 80 },
      { address: "fd00::10", port: 80 },
      { address: "10.96.0.9", port: 80 },
    ],
    capturePort: 15001,
    dns: { servers: [], addresses: ["192.0.2.1"], port: 18054 },
  });
  assert.deepEqual(got, {
    vips: [
      { address: "10.96.0.9", port: 80 },
      { address: "10.96.0.10", port: 80 },
      { address: "10.96.0.10", port: 8080 },
      { address: "fd00::10", port: 80 },
    ],
    capturePort: 15001,
  });
  // Canonical forms are fixed points.
  assert.deepEqual(normalizeSpec(got), got);
});

Deno.test("normalizeSpec: a DNS address of a family without servers is dropped", () => {
  const got = normalizeSpec({
    ...base,
    dns: { servers: ["fd00::53", "FD00::53"], addresses: ["192.0.2.1", "2001:DB8::1"], port: 53 },
  });
  assert.deepEqual(got.dns, { servers: ["fd00::53"], addresses: ["2001:db8::1"], port: 53 });
});

Deno.test("normalizeSpec: what cannot be rendered, said so", () => {
  const bad: [CaptureSpec, RegExp][] = [
    [{ ...base, vips: [{ address: "None", port: 80 }] }, /VIP "None" is not an IP address/],
    [{ ...base, vips: [{ address: "10.0.0.1/32", port: 80 }] }, /not an IP address/],
    [
      { ...base, vips: [{ address: "10.0.0.1", port: 0 }] },
      /port of VIP 10\.0\.0\.1 0 is not a port/,
    ],
    [{ ...base, vips: [{ address: "10.0.0.1", port: 65536 }] }, /is not a port/],
    [{ ...base, vips: [{ address: "10.0.0.1", port: 80.5 }] }, /is not a port/],
    [{ ...base, capturePort: 0 }, /capture port 0 is not a port/],
    [
      { ...base, dns: { servers: ["fd00::53"], addresses: ["192.0.2.1"], port: 18054 } },
      /DNS server fd00::53 is IPv6 but no DNS redirect address is/,
    ],
    [
      { ...base, dns: { servers: ["10.0.0.53"], addresses: ["192.0.2.1", "192.0.2.2"], port: 1 } },
      /have two of IPv4/,
    ],
    [
      { ...base, dns: { servers: ["10.0.0.53"], addresses: ["192.0.2.1"], port: 0 } },
      /DNS redirect port 0/,
    ],
  ];
  for (const [spec, message] of bad) {
    assert.throws(
      () => normalizeSpec(spec),
      (e) => e instanceof NftSpecError && message.test(e.message),
    );
  }
});

Deno.test("sameSpec: equal canonical specs only", () => {
  const a = normalizeSpec({
    vips: [{ address: "10.0.0.1", port: 80 }],
    capturePort: 15001,
    dns: { servers: ["10.0.0.53"], addresses: ["192.0.2.1"], port: 18054 },
  });
  assert.ok(sameSpec(a, structuredClone(a)));
  assert.ok(!sameSpec(a, { ...a, capturePort: 15002 }));
  assert.ok(!sameSpec(a, { ...a, vips: [{ address: "10.0.0.1", port: 81 }] }));
  assert.ok(!sameSpec(a, { ...a, vips: [] }));
  assert.ok(!sameSpec(a, { vips: a.vips, capturePort: a.capturePort }));
  assert.ok(!sameSpec(a, { ...a, dns: { ...a.dns!, port: 53 } }));
  assert.ok(!sameSpec(a, { ...a, dns: { ...a.dns!, servers: ["10.0.0.54"] } }));
  assert.ok(!sameSpec(a, { ...a, dns: { ...a.dns!, addresses: ["192.0.2.2"] } }));
});
