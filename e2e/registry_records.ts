/**
 * Registry records for the ServiceImport e2e tests: one endpoint of `<ns>/<service>` in `cluster`,
 * served by an echo server on its `http` port — the `eps/…` key and value a registrar writes.
 * @module
 */

/** The `[key in the origin, value]` of one endpoint. */
export function endpointEntry(
  cluster: string,
  namespace: string,
  service: string,
  pod: string,
  echo: { hostname: string; port: number },
): readonly [string, string] {
  return [
    `eps/${namespace}/${service}/${pod}`,
    JSON.stringify({
      cluster,
      namespace,
      service,
      pod,
      ip: echo.hostname,
      ports: [{ name: "http", protocol: "TCP", port: echo.port }],
    }),
  ];
}
