/**
 * Secrets (SDS): listener certificates, inline PEM.
 * @module
 */
import type { IRSecret } from "../../../lib/ir/mod.ts";
import type { NamedResource } from "./types.ts";

/** The Envoy Secret for one IRSecret (SDS resource name = IRSecret name). */
export function secret(s: IRSecret): NamedResource {
  return {
    name: s.name,
    resource: {
      name: s.name,
      tls_certificate: {
        certificate_chain: { inline_string: s.certificateChain },
        private_key: { inline_string: s.privateKey },
      },
    },
  };
}
