/** Run inside a pod: one gRPC call through the node proxy's egress listener; prints the reply. */
import { parseArgs } from "node:util";
import { callGrpc } from "./echo/grpc_server.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    host: { type: "string" },
    method: { type: "string" },
    port: { type: "string", default: "18081" },
  },
});
const reply = await callGrpc(`127.0.0.1:${values.port}`, values.host!, values.method!);
console.log(JSON.stringify(reply));
