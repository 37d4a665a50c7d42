import assert from "node:assert/strict";
import {
  encodeReply,
  encodeRequest,
  FrameError,
  LIMITS,
  readReply,
  readRequest,
} from "./protocol.ts";

/** A reader over `bytes`, handing them out `chunk` bytes at a time. */
function reader(bytes: Uint8Array, chunk = 3) {
  let at = 0;
  return {
    read(p: Uint8Array): Promise<number | null> {
      if (at >= bytes.length) return Promise.resolve(null);
      const n = Math.min(chunk, p.length, bytes.length - at);
      p.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
  };
}

Deno.test("protocol: request and reply round trip, however the bytes arrive", async () => {
  const env = { CNI_COMMAND: "ADD", CNI_ARGS: "K8S_POD_NAME=a=b;X=ü" };
  const stdin = new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode('{"a":"é"}')]);
  const req = await readRequest(reader(encodeRequest({ env, stdin })));
  assert.deepEqual(req.env, env);
  assert.equal(req.stdin, '\ufeff{"a":"é"}', "a byte-order mark is kept (it is not JSON)");
  const reply = { exitCode: 1, stdout: '{"code":11}\n', stderr: "note" };
  assert.deepEqual(await readReply(reader(encodeReply(reply), 1)), reply);
});

Deno.test("protocol: bad magic, a part over its bound, a short frame are FrameErrors", async () => {
  await assert.rejects(readRequest(reader(new TextEncoder().encode("HTTP/1.1"))), FrameError);
  const big = encodeRequest({ env: {}, stdin: "x".repeat(LIMITS.stdin + 1) });
  await assert.rejects(readRequest(reader(big, 1 << 16)), /over the 1048576 allowed/);
  const cut = encodeRequest({ env: { A: "b" }, stdin: "{}" }).subarray(0, 10);
  await assert.rejects(readRequest(reader(cut)), /the frame ended after/);
});
