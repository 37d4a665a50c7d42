/** `deno task demo` runs end to end: Envoy from the peer cache, a real 90/10 split, the header match. */
import { assert } from "../testbed/assert.ts";

Deno.test("demo: the quickstart shows the split and the header match, and exits 0", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "examples/quickstart/demo.ts"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert(out.success, `demo failed:\n${text}\n${new TextDecoder().decode(out.stderr)}`);
  assert(/echo-v1\s+\d+ \(8[5-9]\.\d%|echo-v1\s+\d+ \(9[0-5]\.\d%/.test(text), text);
  assert(text.includes("with header x-canary: always → echo-v2 (HTTP 200)"), text);
  // The closing lines do not invite curls against a demo that has exited.
  assert(text.includes("The demo has stopped") && text.includes("deno task demo --keep"), text);
  assert(!text.includes("Still running"), text);
});
