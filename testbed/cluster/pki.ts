/**
 * The local cluster's PKI, made with openssl (EC P-256; RSA for service-account tokens): a CA, the
 * API server's serving cert, client certs for the admin, the API server → kubelet and the kubelet,
 * the kubelet's serving cert, and the kubeconfigs for the admin and the kubelet.
 * @module
 */
import { ensurePeer } from "../peers/mod.ts";
import { run } from "../peers/mod.ts";
import { kubeconfig } from "./config.ts";
import { type Layout, paths } from "./layout.ts";

/** One leaf certificate: file stem, subject, extensions. */
interface Leaf {
  stem: string;
  subject: string;
  ext: string;
}

/** The leaf certificates of a layout (pure). */
export function leafCerts(l: Layout): Leaf[] {
  const apiSans = [
    `IP:${l.nodeIp}`,
    "IP:127.0.0.1",
    `IP:${l.apiServiceIp}`,
    "DNS:localhost",
    "DNS:kubernetes",
    "DNS:kubernetes.default",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default.svc.cluster.local",
  ];
  const client = "extendedKeyUsage=clientAuth\n";
  return [
    {
      stem: "server",
      subject: "/CN=kube-apiserver",
      ext: `subjectAltName=${apiSans.join(",")}\nextendedKeyUsage=serverAuth\n`,
    },
    { stem: "admin", subject: "/O=system:masters/CN=aether-admin", ext: client },
    { stem: "apiserver-kubelet", subject: "/O=system:masters/CN=kube-apiserver", ext: client },
    { stem: "kubelet", subject: `/O=system:nodes/CN=system:node:${l.nodeName}`, ext: client },
    {
      stem: "kubelet-serving",
      subject: `/CN=${l.nodeName}`,
      ext: `subjectAltName=IP:${l.nodeIp},DNS:${l.nodeName}\nextendedKeyUsage=serverAuth\n`,
    },
  ];
}

/** The shell script that writes the PKI into the current directory (pure). */
export function pkiScript(l: Layout): string {
  const ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  const lines = [
    "set -e",
    `openssl req -x509 ${ec} -days 3650 -keyout ca.key -out ca.crt -subj /CN=aether-local-ca 2>/dev/null`,
  ];
  for (const c of leafCerts(l)) {
    lines.push(
      `openssl req ${ec} -keyout ${c.stem}.key -out ${c.stem}.csr -subj '${c.subject}' 2>/dev/null`,
      `printf '${c.ext.replaceAll("\n", "\\n")}' > ${c.stem}.ext`,
      `openssl x509 -req -in ${c.stem}.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 ` +
        `-extfile ${c.stem}.ext -out ${c.stem}.crt 2>/dev/null`,
    );
  }
  lines.push(
    "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null",
    "openssl pkey -in sa.key -pubout -out sa.pub",
    "chmod 600 *.key",
  );
  return lines.join("\n") + "\n";
}

/** The API server URL clients use (the node IP, reachable from the host through the veth). */
export function apiServerUrl(l: Layout): string {
  return `https://${l.nodeIp}:6443`;
}

/** Writes the PKI and both kubeconfigs unless they exist already (a reused state folder). */
export async function ensurePki(l: Layout): Promise<void> {
  const p = paths(l);
  try {
    await Deno.stat(p.kubeletKubeconfig);
    return;
  } catch { /* first run */ }
  await ensurePeer("openssl");
  await Deno.mkdir(p.pki, { recursive: true, mode: 0o700 });
  await run("sh", ["-c", pkiScript(l)], { cwd: p.pki });
  const read = (f: string) => Deno.readTextFile(p.pkiFile(f));
  const ca = await read("ca.crt");
  const url = apiServerUrl(l);
  await Deno.writeTextFile(
    p.adminKubeconfig,
    kubeconfig(url, ca, await read("admin.crt"), await read("admin.key")),
    { mode: 0o600 },
  );
  await Deno.writeTextFile(
    p.kubeletKubeconfig,
    kubeconfig(url, ca, await read("kubelet.crt"), await read("kubelet.key")),
    { mode: 0o600 },
  );
}
