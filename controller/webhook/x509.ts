/**
 * The webhook's own X.509 certificates (RFC 5280), made with WebCrypto ECDSA P-256 / SHA-256: a
 * self-signed CA (the `caBundle` the API server trusts) and a serving certificate it signs (DNS
 * and IP subject alternative names, serverAuth). And the facts the rotation plan reads back from a
 * certificate: validity, key identifiers, names. No I/O; keys and serials come from the crypto RNG.
 * @module
 */
import {
  bits,
  type Bytes,
  children,
  explicit,
  implicit,
  int,
  octets,
  oid,
  readTime,
  readTlv,
  seq,
  set,
  time,
  type Tlv,
  TRUE,
  unsigned,
  utf8,
} from "./der.ts";

const OID = {
  ecPublicKey: "1.2.840.10045.2.1",
  ecdsaSha256: "1.2.840.10045.4.3.2",
  commonName: "2.5.4.3",
  subjectKeyId: "2.5.29.14",
  keyUsage: "2.5.29.15",
  subjectAltName: "2.5.29.17",
  basicConstraints: "2.5.29.19",
  authorityKeyId: "2.5.29.35",
  extKeyUsage: "2.5.29.37",
  serverAuth: "1.3.6.1.5.5.7.3.1",
};

const EC = { name: "ECDSA", namedCurve: "P-256" } as const;
const SIGN = { name: "ECDSA", hash: "SHA-256" } as const;

/** A certificate and its private key, PEM (PKCS#8 key). */
export interface CertAndKey {
  certPem: string;
  keyPem: string;
}

/** What the rotation plan needs to know about a certificate. */
export interface CertFacts {
  notBefore: number;
  notAfter: number;
  /** Subject key identifier, hex. */
  keyId: string;
  /** Authority key identifier, hex ("" when absent). */
  issuerKeyId: string;
  /** DNS and IP subject alternative names, sorted. */
  names: string[];
  /** The DER, for comparing certificates. */
  der: Bytes;
}

const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");

/** PEM of DER under `label`. */
export function toPem(der: Uint8Array, label: string): string {
  const b64 = btoa(String.fromCharCode(...der)).replace(/.{1,64}/g, "$&\n");
  return `-----BEGIN ${label}-----\n${b64}-----END ${label}-----\n`;
}

/** The DER of every `label` block in `pem`, in order. */
export function fromPem(pem: string, label = "CERTIFICATE"): Bytes[] {
  const re = new RegExp(`-----BEGIN ${label}-----([^-]+)-----END ${label}-----`, "g");
  return [...pem.matchAll(re)].map((m) =>
    Uint8Array.from(atob(m[1].replace(/\s+/g, "")), (c) => c.charCodeAt(0))
  );
}

/** A Name with one CN. */
const name = (cn: string) => seq(set(seq(oid(OID.commonName), utf8(cn))));

function extension(id: string, value: Uint8Array, critical = false): Uint8Array {
  return critical ? seq(oid(id), TRUE, octets(value)) : seq(oid(id), octets(value));
}

/** IEEE P1363 r‖s (what WebCrypto returns) to the DER `Ecdsa-Sig-Value`. */
function derSignature(raw: Uint8Array): Bytes {
  return seq(unsigned(raw.subarray(0, 32)), unsigned(raw.subarray(32)));
}

/** RFC 5280 §4.2.1.2 method 1: SHA-1 of the public key's bits. */
async function keyId(publicKey: CryptoKey): Promise<Bytes> {
  const raw = new Uint8Array(await crypto.subtle.exportKey("raw", publicKey));
  return new Uint8Array(await crypto.subtle.digest("SHA-1", raw));
}

function ipBytes(ip: string): Bytes {
  if (!ip.includes(":")) return new Uint8Array(ip.split(".").map(Number));
  const [head, tail = ""] = ip.split("::");
  const h = head ? head.split(":") : [], t = tail ? tail.split(":") : [];
  const groups = ip.includes("::") ? [...h, ...Array(8 - h.length - t.length).fill("0"), ...t] : h;
  return new Uint8Array(groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]));
}

/** An IP address's SAN form: dotted quad, or eight uncompressed lower-case hex groups. */
function ipText(b: Uint8Array): string {
  if (b.length === 4) return [...b].join(".");
  const groups: string[] = [];
  for (let i = 0; i + 1 < b.length; i += 2) groups.push(((b[i] << 8) | b[i + 1]).toString(16));
  return groups.join(":");
}

/** The names a certificate for `dnsNames` and `ipAddresses` carries, as `describeCert` reads them. */
export function sanNames(
  dnsNames: readonly string[],
  ipAddresses: readonly string[] = [],
): string[] {
  return [...dnsNames, ...ipAddresses.map((ip) => ipText(ipBytes(ip)))].sort();
}

interface Issuer {
  name: Bytes;
  keyId: Bytes;
  key: CryptoKey;
}

/** Signs a TBSCertificate of these parts with `issuer`; returns the certificate's DER. */
async function sign(
  issuer: Issuer,
  subject: Uint8Array,
  publicKey: CryptoKey,
  validity: { notBefore: number; notAfter: number },
  extensions: Uint8Array[],
): Promise<Uint8Array> {
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] &= 0x7f;
  const alg = seq(oid(OID.ecdsaSha256));
  const tbs = seq(
    explicit(0, int(2)), // v3
    unsigned(serial),
    alg,
    issuer.name,
    seq(time(validity.notBefore), time(validity.notAfter)),
    subject,
    new Uint8Array(await crypto.subtle.exportKey("spki", publicKey)),
    explicit(3, seq(...extensions)),
  );
  const sig = new Uint8Array(await crypto.subtle.sign(SIGN, issuer.key, tbs));
  return seq(tbs, alg, bits(derSignature(sig)));
}

async function pkcs8Pem(key: CryptoKey): Promise<string> {
  return toPem(new Uint8Array(await crypto.subtle.exportKey("pkcs8", key)), "PRIVATE KEY");
}

/** A self-signed CA (basicConstraints CA, keyCertSign + cRLSign) named `commonName`. */
export async function newCa(
  commonName: string,
  validity: { notBefore: number; notAfter: number },
): Promise<CertAndKey> {
  const pair = await crypto.subtle.generateKey(EC, true, ["sign", "verify"]);
  const id = await keyId(pair.publicKey);
  const subject = name(commonName);
  const der = await sign(
    { name: subject, keyId: id, key: pair.privateKey },
    subject,
    pair.publicKey,
    validity,
    [
      extension(OID.basicConstraints, seq(TRUE), true),
      extension(OID.keyUsage, bits(new Uint8Array([0x06]), 1), true), // keyCertSign, cRLSign
      extension(OID.subjectKeyId, octets(id)),
    ],
  );
  return { certPem: toPem(der, "CERTIFICATE"), keyPem: await pkcs8Pem(pair.privateKey) };
}

/**
 * A serving certificate signed by `ca` (its first certificate) for `dnsNames` and `ipAddresses`
 * (CN = the first name), digitalSignature, serverAuth.
 */
export async function newServingCert(
  ca: CertAndKey,
  names: { dnsNames: readonly string[]; ipAddresses?: readonly string[] },
  validity: { notBefore: number; notAfter: number },
): Promise<CertAndKey> {
  const caDer = fromPem(ca.certPem)[0];
  const caKey = await crypto.subtle.importKey(
    "pkcs8",
    fromPem(ca.keyPem, "PRIVATE KEY")[0],
    EC,
    false,
    [
      "sign",
    ],
  );
  const issuer = { name: subjectOf(caDer), keyId: hexBytes(describeCert(caDer).keyId), key: caKey };
  const pair = await crypto.subtle.generateKey(EC, true, ["sign", "verify"]);
  const san = seq(
    ...names.dnsNames.map((n) => implicit(2, new TextEncoder().encode(n))),
    ...(names.ipAddresses ?? []).map((ip) => implicit(7, ipBytes(ip))),
  );
  const der = await sign(
    issuer,
    name(names.dnsNames[0] ?? "aether-webhook"),
    pair.publicKey,
    validity,
    [
      extension(OID.basicConstraints, seq(), true),
      extension(OID.keyUsage, bits(new Uint8Array([0x80]), 7), true), // digitalSignature
      extension(OID.extKeyUsage, seq(oid(OID.serverAuth))),
      extension(OID.subjectAltName, san),
      extension(OID.subjectKeyId, octets(await keyId(pair.publicKey))),
      extension(OID.authorityKeyId, seq(implicit(0, issuer.keyId))),
    ],
  );
  return { certPem: toPem(der, "CERTIFICATE"), keyPem: await pkcs8Pem(pair.privateKey) };
}

function hexBytes(h: string): Bytes {
  return new Uint8Array((h.match(/../g) ?? []).map((x) => parseInt(x, 16)));
}

/** The parts of a certificate's TBSCertificate: version-less indexes are fixed by RFC 5280. */
function tbsParts(der: Uint8Array): Tlv[] {
  const cert = readTlv(der, 0);
  const tbs = children(der, cert)[0];
  const parts = children(der, tbs);
  return parts[0].tag === 0xa0 ? parts.slice(1) : parts; // drop [0] version
}

/** The subject Name's DER (the issuer field of what this certificate signs). */
function subjectOf(der: Bytes): Bytes {
  const s = tbsParts(der)[4];
  return der.slice(s.at, s.end);
}

/** Reads validity, key identifiers and names of a certificate (DER). Throws when it does not parse. */
export function describeCert(der: Bytes): CertFacts {
  const parts = tbsParts(der);
  const [notBefore, notAfter] = children(der, parts[3]).map((t) => readTime(der, t));
  let keyId = "", issuerKeyId = "";
  const names: string[] = [];
  const ext = parts.find((p) => p.tag === 0xa3);
  for (const e of ext ? children(der, children(der, ext)[0]) : []) {
    const [id, ...rest] = children(der, e);
    const idHex = hex(der.subarray(id.start, id.end));
    const value = rest[rest.length - 1]; // the OCTET STRING (after an optional critical flag)
    const inner = readTlv(der, value.start);
    if (idHex === hex(oid(OID.subjectKeyId).subarray(2))) {
      keyId = hex(der.subarray(inner.start, inner.end));
    } else if (idHex === hex(oid(OID.authorityKeyId).subarray(2))) {
      const k = children(der, inner).find((t) => t.tag === 0x80);
      if (k) issuerKeyId = hex(der.subarray(k.start, k.end));
    } else if (idHex === hex(oid(OID.subjectAltName).subarray(2))) {
      for (const g of children(der, inner)) {
        const v = der.subarray(g.start, g.end);
        if (g.tag === 0x82) names.push(new TextDecoder().decode(v));
        if (g.tag === 0x87) names.push(ipText(v));
      }
    }
  }
  return { notBefore, notAfter, keyId, issuerKeyId, names: names.sort(), der };
}

/** `describeCert` of every certificate in a PEM bundle. */
export function describePem(pem: string): CertFacts[] {
  return fromPem(pem).map(describeCert);
}

/** True when two PEM bundles hold the same certificates in the same order. */
export function samePem(a: string, b: string): boolean {
  const x = fromPem(a), y = fromPem(b);
  return x.length === y.length && x.every((d, i) => hex(d) === hex(y[i]));
}
