/** Test certificates made with the real openssl: a CA and a server certificate signed by it. */
import { ensurePeer } from "../lib/peers/mod.ts";

/** PEM-encoded CA certificate and a server certificate + key for `dnsNames`. */
export interface TestCert {
  ca: string;
  cert: string;
  key: string;
}

async function openssl(bin: string, args: string[], cwd: string): Promise<void> {
  const out = await new Deno.Command(bin, { args, cwd, stdout: "null", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/** Makes a fresh CA and a server certificate for the given DNS names (first = CN). */
export async function makeCert(dnsNames: string[]): Promise<TestCert> {
  const bin = await ensurePeer("openssl");
  const dir = await Deno.makeTempDir({ prefix: "aether-tls-" });
  try {
    await openssl(bin, [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "2",
      "-subj",
      "/CN=aether test CA",
    ], dir);
    await openssl(bin, [
      "req",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      "tls.key",
      "-out",
      "tls.csr",
      "-subj",
      `/CN=${dnsNames[0]}`,
    ], dir);
    await Deno.writeTextFile(
      `${dir}/ext.cnf`,
      `subjectAltName=${dnsNames.map((n) => `DNS:${n}`).join(",")}\n`,
    );
    await openssl(bin, [
      "x509",
      "-req",
      "-in",
      "tls.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "tls.crt",
      "-days",
      "2",
      "-extfile",
      "ext.cnf",
    ], dir);
    return {
      ca: await Deno.readTextFile(`${dir}/ca.crt`),
      cert: await Deno.readTextFile(`${dir}/tls.crt`),
      key: await Deno.readTextFile(`${dir}/tls.key`),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
