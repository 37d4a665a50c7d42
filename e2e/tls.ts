/**
 * Test certificates made with the real openssl: P-256 keys, self-signed CAs and leaf certificates
 * signed by them, as PEM files in a folder ({@link selfSigned}, {@link signLeaf}) or, for a server
 * certificate, as PEM text ({@link makeCert}). e2e/spire.ts roots a SPIRE trust domain in these.
 * @module
 */
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";

/** PEM-encoded CA certificate and a server certificate + key for `dnsNames`. */
export interface TestCert {
  ca: string;
  cert: string;
  key: string;
}

/** Key and certificate file names inside a folder. */
export interface PemFiles {
  key: string;
  cert: string;
}

/** Runs `openssl args` in `dir`; throws with openssl's stderr when it fails. */
export async function openssl(dir: string, args: string[]): Promise<void> {
  const bin = await ensurePeer("openssl");
  const out = await new Deno.Command(bin, { args, cwd: dir, stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

const P256 = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

/**
 * A self-signed certificate with a new P-256 key in `dir` (`files`), subject `/CN=<cn>`, valid
 * `days`, with each of `extensions` added (`-addext`, e.g. `basicConstraints=critical,CA:TRUE`).
 */
export async function selfSigned(
  dir: string,
  files: PemFiles,
  o: { cn: string; days?: number; extensions?: string[] },
): Promise<void> {
  await openssl(dir, [
    "req",
    "-x509",
    ...P256,
    "-keyout",
    files.key,
    "-out",
    files.cert,
    "-days",
    String(o.days ?? 2),
    "-subj",
    `/CN=${o.cn}`,
    ...(o.extensions ?? []).flatMap((e) => ["-addext", e]),
  ]);
}

/**
 * A certificate with a new P-256 key in `dir` (`files`), subject `/CN=<cn>`, signed by the CA
 * `ca` (files in `dir`), valid `days`, with the extension lines `extensions` (an -extfile).
 */
export async function signLeaf(
  dir: string,
  files: PemFiles,
  o: { cn: string; ca: PemFiles; days?: number; extensions: string[] },
): Promise<void> {
  const csr = `${files.cert}.csr`;
  const ext = `${files.cert}.ext`;
  await openssl(dir, ["req", ...P256, "-keyout", files.key, "-out", csr, "-subj", `/CN=${o.cn}`]);
  await Deno.writeTextFile(join(dir, ext), o.extensions.map((e) => `${e}\n`).join(""));
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    o.ca.cert,
    "-CAkey",
    o.ca.key,
    "-CAcreateserial",
    "-out",
    files.cert,
    "-days",
    String(o.days ?? 2),
    "-extfile",
    ext,
  ]);
}

/** Makes a fresh CA and a server certificate for the given DNS names (first = CN). */
export async function makeCert(dnsNames: string[]): Promise<TestCert> {
  const dir = await Deno.makeTempDir({ prefix: "aether-tls-" });
  try {
    const ca = { key: "ca.key", cert: "ca.crt" };
    await selfSigned(dir, ca, { cn: "aether test CA" });
    await signLeaf(dir, { key: "tls.key", cert: "tls.crt" }, {
      cn: dnsNames[0],
      ca,
      extensions: [`subjectAltName=${dnsNames.map((n) => `DNS:${n}`).join(",")}`],
    });
    return {
      ca: await Deno.readTextFile(join(dir, "ca.crt")),
      cert: await Deno.readTextFile(join(dir, "tls.crt")),
      key: await Deno.readTextFile(join(dir, "tls.key")),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
