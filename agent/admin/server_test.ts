import assert from "node:assert/strict";
import { Registry } from "../../lib/metrics/mod.ts";
import { type AdminHandlers, handleAdmin } from "./server.ts";

const base: AdminHandlers = {
  readiness: () => ({ ready: true, detail: "ready" }),
  status: () => ({}),
  xds: () => ({}),
  metrics: new Registry(),
};
const get = (h: AdminHandlers, path: string) =>
  handleAdmin(h, new Request(`http://127.0.0.1:15000${path}`));

Deno.test("admin /debug/capture: the capture document where capture is on, 404 saying so where off", async () => {
  const off = get(base, "/debug/capture");
  assert.equal(off.status, 404);
  assert.match(await off.text(), /transparent capture is off/);
  const on = get(
    { ...base, capture: () => ({ pods: [{ key: "a/p", state: "captured" }] }) },
    "/debug/capture",
  );
  assert.equal(on.status, 200);
  assert.deepEqual(await on.json(), { pods: [{ key: "a/p", state: "captured" }] });
  assert.match(await get(base, "/nope").text(), /\/debug\/capture/);
});
