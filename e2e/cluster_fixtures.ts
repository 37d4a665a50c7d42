/**
 * Shared pieces of the local-cluster tests: an echo-basic Deployment + Service.
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
