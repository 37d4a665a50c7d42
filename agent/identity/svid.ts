/**
 * X.509-SVIDs and trust bundles as aether holds them (PEM, for SDS), built from the DER the SPIRE
 * APIs send, and SPIFFE ID parsing. Pure.
 * @module
 */
import { Buffer } from "node:buffer";
import { X509Certificate } from "node:crypto";

/** One identity's current certificate and key. */
export interface Svid {
  /** `spiffe://<trust domain>/<path>`. */
  spiffeId: string;
  /** Leaf first, then intermediates; PEM. */
  certChainPem: string;
  /** PKCS#8 private key, PEM. */
  keyPem: string;
  /** Expiry of the leaf, ms since the epoch. */
  expiresAt: number;
  /** Start of the leaf's validity (notBefore), ms since the epoch. */
  issuedAt: number;
}

/**
 * The share of an SVID's lifetime after which a missing renewal says SPIRE cannot issue: the
 * SPIRE agent renews at half the lifetime, so two thirds leaves it a sixth to retry in.
 */
export const RENEWAL_OVERDUE_SHARE = 2 / 3;

/**
 * Whether `svid` should have been replaced by `now` (past {@link RENEWAL_OVERDUE_SHARE} of its
 * lifetime) but has not expired yet: the sign of a SPIRE server the agent cannot reach.
 */
export function renewalOverdue(svid: Svid, now: number): boolean {
  const life = svid.expiresAt - svid.issuedAt;
  return now < svid.expiresAt && now >= svid.issuedAt + life * RENEWAL_OVERDUE_SHARE;
}

/** The CA certificates of one trust domain. */
export interface TrustBundle {
  /** Trust domain name, e.g. `cluster.local` (no scheme). */
  trustDomain: string;
  /** CA certificates, PEM, concatenated. */
  caPem: string;
}

/** PEM of one DER object under `label` (`CERTIFICATE`, `PRIVATE KEY`). */
export function derToPem(der: Uint8Array, label: string): string {
  const b64 = Buffer.from(der).toString("base64").replace(/.{1,64}/g, "$&\n");
  return `-----BEGIN ${label}-----\n${b64}-----END ${label}-----\n`;
}

/**
 * Splits concatenated DER certificates (as bundles are sent) at the outer ASN.1 SEQUENCE
 * lengths. Throws on a truncated or non-SEQUENCE object.
 */
export function splitDer(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes[at] !== 0x30) throw new Error(`DER: expected a SEQUENCE at byte ${at}`);
    let len = bytes[at + 1];
    let head = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      if (n === 0 || n > 4) throw new Error(`DER: unsupported length form at byte ${at}`);
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + bytes[at + 2 + i];
      head += n;
    }
    const end = at + head + len;
    if (end > bytes.length) throw new Error(`DER: object at byte ${at} is truncated`);
    out.push(bytes.subarray(at, end));
    at = end;
  }
  return out;
}

/** PEM of concatenated DER certificates. */
export function certsPem(ders: readonly Uint8Array[]): string {
  return ders.map((d) => derToPem(d, "CERTIFICATE")).join("");
}

/** A parsed SPIFFE ID. */
export interface SpiffeId {
  trustDomain: string;
  /** With a leading slash; may be empty. */
  path: string;
}

const TRUST_DOMAIN = /^[a-z0-9._-]+$/;
const SEGMENT = /^[A-Za-z0-9._-]+$/;

/** Parses `spiffe://<td>/<path>` per the SPIFFE ID spec; throws saying what is wrong. */
export function parseSpiffeId(id: string): SpiffeId {
  if (!id.startsWith("spiffe://")) throw new Error(`${id}: a SPIFFE ID starts with spiffe://`);
  const rest = id.slice("spiffe://".length);
  const slash = rest.indexOf("/");
  const trustDomain = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash);
  if (!TRUST_DOMAIN.test(trustDomain)) {
    throw new Error(`${id}: trust domain must be lower-case letters, digits, '.', '-', '_'`);
  }
  if (path !== "") {
    for (const seg of path.slice(1).split("/")) {
      if (!SEGMENT.test(seg) || seg === "." || seg === "..") {
        throw new Error(`${id}: path segment "${seg}" is not allowed`);
      }
    }
  }
  return { trustDomain, path };
}

/** Validates a trust domain name (no scheme); throws saying what is wrong. */
export function checkTrustDomain(td: string): string {
  if (!TRUST_DOMAIN.test(td)) {
    throw new Error(`trust domain "${td}": lower-case letters, digits, '.', '-', '_' only`);
  }
  return td;
}

/** Builds an Svid from a DER chain and key; the expiry is read from the leaf. */
export function svidFromDer(spiffeId: string, chain: readonly Uint8Array[], key: Uint8Array): Svid {
  if (chain.length === 0) throw new Error(`${spiffeId}: empty certificate chain`);
  const leaf = new X509Certificate(Buffer.from(chain[0]));
  return {
    spiffeId,
    certChainPem: certsPem(chain),
    keyPem: derToPem(key, "PRIVATE KEY"),
    expiresAt: Date.parse(leaf.validTo),
    issuedAt: Date.parse(leaf.validFrom),
  };
}
