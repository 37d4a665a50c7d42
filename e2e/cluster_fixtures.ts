/**
 * Shared pieces of the local-cluster tests: an echo-basic Deployment + Service, and a Deployment
 * of Istio's echo server (TCP, HTTP and TLS).
 * @module
 */

/** Options of {@link echoApp}. */
export interface EchoApp {
  name: string;
  namespace: string;
  image: string;
  replicas?: number;
  /** The Service's type (default ClusterIP) and port (default 8080) in front of the pods' :3000. */
  serviceType?: "ClusterIP" | "LoadBalancer";
  port?: number;
}

/** A Deployment of echo-basic (it reports its pod and namespace) and a Service of the same name. */
export function echoApp(a: EchoApp): string {
  return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${a.name}, namespace: ${a.namespace}}
spec:
  replicas: ${a.replicas ?? 1}
  selector: {matchLabels: {app: ${a.name}}}
  template:
    metadata: {labels: {app: ${a.name}}}
    spec:
      containers:
      - name: echo
        image: ${a.image}
        imagePullPolicy: Never
        env:
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
        ports: [{containerPort: 3000}]
        readinessProbe: {httpGet: {path: /, port: 3000}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: ${a.name}, namespace: ${a.namespace}}
spec:
  type: ${a.serviceType ?? "ClusterIP"}
  selector: {app: ${a.name}}
  ports: [{name: http, port: ${a.port ?? 8080}, targetPort: 3000}]
`;
}

/**
 * A Deployment `name` (label `app: <name>`) of Istio's echo server (`image`): TCP echo on 9090,
 * HTTP on 8080, HTTPS on 8443 with the image's own certificate. Its Services are the caller's.
 */
export function istioEchoDeployment(name: string, namespace: string, image: string): string {
  return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
      - name: echo
        image: ${image}
        imagePullPolicy: Never
        args: [--tcp=9090, --port=8080, --port=8443, --tls=8443, --crt=/cert.crt, --key=/cert.key]
`;
}
