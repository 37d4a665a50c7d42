/**
 * The parts of core Kubernetes kinds aether reads (Service, Namespace, Secret, EndpointSlice, Pod),
 * as structural schemas: these are built-in API types, not CRDs, so there is no YAML to generate
 * them from; only the fields aether uses are described, others are kept unchecked. Their group,
 * versions and scope are the catalogue's (catalogue/mod.ts `CORE_KINDS`).
 * @module
 */
import { any, arr, bool, int, map, obj, type Schema, str } from "./structural_schema.ts";

const port = () => int({ min: 1, max: 65535 });

const serviceSpec = obj({
  ports: arr(
    obj({
      name: str(),
      port: port(),
      targetPort: any(),
      protocol: str({ enum: ["TCP", "UDP", "SCTP"], default: "TCP" }),
      appProtocol: str(),
    }, { required: ["port"], open: true }),
  ),
}, { open: true });

/** Schema of the top-level body (fields other than apiVersion, kind, metadata, status), by kind. */
export const CORE_SCHEMAS: Readonly<Record<string, Schema>> = {
  Service: obj({ spec: serviceSpec }, { open: true }),
  Namespace: obj({ spec: any() }, { open: true }),
  // Read by the node role (which pods a node proxy serves), not by resolve.
  Pod: obj({ spec: any() }, { open: true }),
  Secret: obj({
    type: str({ default: "Opaque" }),
    data: map(str()),
    stringData: map(str()),
    immutable: bool(),
  }),
  EndpointSlice: obj({
    addressType: str({ enum: ["IPv4", "IPv6", "FQDN"] }),
    endpoints: arr(
      obj({
        addresses: arr(str(), { min: 1, max: 100 }),
        conditions: obj({ ready: bool(), serving: bool(), terminating: bool() }),
        zone: str(),
      }, { required: ["addresses"], open: true }),
      { max: 1000 },
    ),
    ports: arr(obj({ name: str(), port: int(), protocol: str(), appProtocol: str() }), {
      max: 100,
    }),
  }, { required: ["addressType"], open: true }),
};
