import assert from "node:assert/strict";
import type { IRRedirectAction, IRRouteMatch } from "../../../lib/ir/mod.ts";
import { redirectAction } from "./action.ts";

const match: IRRouteMatch = {
  path: { type: "PathPrefix", value: "/" },
  headers: [],
  queryParams: [],
};
const portOf = (
  a: Omit<IRRedirectAction, "kind" | "statusCode">,
  scheme: "http" | "https",
  port: number,
) =>
  (redirectAction({ kind: "redirect", statusCode: 302, ...a }, match, { scheme, port })
    .redirect as Record<string, unknown>).port_redirect;

Deno.test("redirectAction spells a well-known port only when the request's Host port could leak", () => {
  // Listener on its scheme's well-known port: Host has no port or that one, which Envoy drops on
  // a scheme change, so Location leaves the well-known port out.
  assert.equal(portOf({ scheme: "https", port: 443 }, "http", 80), undefined);
  assert.equal(portOf({ port: 80 }, "http", 80), undefined);
  assert.equal(portOf({ scheme: "http", port: 80 }, "https", 443), undefined);
  // Listener on another port: Host carries it, so the resulting port is spelt out.
  assert.equal(portOf({ scheme: "https", port: 443 }, "http", 8080), 443);
  assert.equal(portOf({ port: 8080 }, "http", 8080), 8080);
  // A hostname redirect replaces the Host port: a well-known port stays out of Location.
  assert.equal(
    portOf({ scheme: "https", port: 443, hostname: "a.example" }, "http", 8080),
    undefined,
  );
  // Any other port is always spelt out.
  assert.equal(portOf({ port: 8443, hostname: "a.example" }, "http", 80), 8443);
});
