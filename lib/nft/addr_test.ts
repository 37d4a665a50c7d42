import assert from "node:assert/strict";
import { compareIp, parseIp } from "./addr.ts";

Deno.test("parseIp: IPv6 text as glibc's inet_ntop (nft) prints it", () => {
  const cases: [string, string][] = [
    ["FD00:0:0::10", "fd00::10"],
    ["fd00:0000:0000:0000:0000:0000:0000:0010", "fd00::10"],
    ["::", "::"],
    ["::1", "::1"],
    ["1::", "1::"],
    ["2001:db8::0:1", "2001:db8::1"],
    // The longest zero run is compressed; the leftmost on a tie; a single zero group never.
    ["1:0:0:1:0:0:0:1", "1:0:0:1::1"],
    ["1:0:0:1:0:0:1:1", "1::1:0:0:1:1"],
    ["1:0:1:0:1:0:1:0", "1:0:1:0:1:0:1:0"],
    // IPv4-mapped and -compatible keep a dotted tail; other embedded tails become hex.
    ["::ffff:1.2.3.4", "::ffff:1.2.3.4"],
    ["::1.2.3.4", "::1.2.3.4"],
    ["1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"],
    ["::ffff:0:1.2.3.4", "::ffff:0:102:304"],
  ];
  for (const [input, text] of cases) assert.equal(parseIp(input)?.text, text, input);
  assert.equal(parseIp("fd00::10")?.key, "fd000000000000000000000000000010");
});

Deno.test("parseIp: IPv4 and what is not an address", () => {
  assert.deepEqual(parseIp("10.96.0.10"), {
    family: 4,
    text: "10.96.0.10",
    key: "0a60000a",
  });
  for (
    const bad of [
      "",
      "None",
      "1.2.3",
      "01.2.3.4",
      "256.0.0.1",
      "1.2.3.4/32",
      "1::2::3",
      "fe80::1%eth0",
      "1:2:3:4:5:6:7:8:9",
      "::g",
      "1.2.3.4:80",
    ]
  ) {
    assert.equal(parseIp(bad), undefined, bad);
  }
});

Deno.test("compareIp: IPv4 first, then by bytes (not by text)", () => {
  const ips = ["fd00::1", "10.96.0.10", "::ffff:1.2.3.4", "10.96.0.9", "9.0.0.1"].map((s) =>
    parseIp(s)!
  );
  assert.deepEqual(ips.sort(compareIp).map((ip) => ip.text), [
    "9.0.0.1",
    "10.96.0.9",
    "10.96.0.10",
    "::ffff:1.2.3.4",
    "fd00::1",
  ]);
});
