import assert from "node:assert/strict";
import { oneUriSanFilter, UPSTREAM_URI_SAN_HEADER, upstreamOneUriSanFilters } from "./uri_san.ts";

Deno.test("outbound URI SAN check: Lua before the header mutation (reverse order on the response), codec last", () => {
  const f = upstreamOneUriSanFilters();
  assert.deepEqual(f.map((x) => x.name), [
    "envoy.filters.http.lua",
    "envoy.filters.http.header_mutation",
    "envoy.filters.http.upstream_codec",
  ]);
  const text = JSON.stringify(f);
  assert.ok(text.includes("%UPSTREAM_PEER_URI_SAN%"));
  assert.ok(text.includes(UPSTREAM_URI_SAN_HEADER));
  assert.match(text, /502/);
});

Deno.test("inbound URI SAN check answers 403 unless exactly one URI SAN", () => {
  const text = JSON.stringify(oneUriSanFilter());
  assert.match(text, /uriSanPeerCertificate\(\) ~= 1/);
  assert.match(text, /403/);
});
