{{/* Common labels. */}}
{{- define "aether.labels" -}}
app.kubernetes.io/name: aether
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The image reference. */}}
{{- define "aether.image" -}}
{{ printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end }}

{{/* Refuse flags of parts that are not built yet. */}}
{{- define "aether.unbuilt" -}}
{{- range $flag := list "generateMeshServices" }}
{{- if index $.Values $flag }}
{{- fail (printf "%s is not built yet in aether; set it to false (docs/kubernetes.md)" $flag) }}
{{- end }}
{{- end }}
{{- end }}

{{/* The Gateway API route kinds the source reads (plural names). */}}
{{- define "aether.routes" -}}
- httproutes
- grpcroutes
- tlsroutes
- tcproutes
- udproutes
{{- end }}

{{/*
The API server's address for the host-network node agents when k8sServiceHost is set (Talos
KubePrism: localhost:7445), in place of the kubernetes Service's ClusterIP the kubelet injects.
*/}}
{{- define "aether.apiServerEnv" -}}
{{- if .Values.k8sServiceHost }}
- name: KUBERNETES_SERVICE_HOST
  value: {{ .Values.k8sServiceHost | quote }}
- name: KUBERNETES_SERVICE_PORT
  value: {{ .Values.k8sServicePort | quote }}
{{- end }}
{{- end }}

{{/*
"true" when workload identity is on: identity.enabled with the node agents (agent.gamma), whose
node proxies serve every pod's :15008. Without them no hop could be mTLS, so none is.
*/}}
{{- define "aether.identity" -}}
{{- if and .Values.identity.enabled .Values.agent.gamma }}true{{ end }}
{{- end }}

{{/* "true" when the chart installs SPIRE itself. */}}
{{- define "aether.spire" -}}
{{- if and (include "aether.identity" .) .Values.identity.spire.install }}true{{ end }}
{{- end }}

{{/* The SPIFFE ID of the node agents: the SPIRE agents' one authorized delegate. */}}
{{- define "aether.agentSpiffeId" -}}
spiffe://{{ .Values.identity.trustDomain }}/ns/{{ .Release.Namespace }}/sa/aether-agent
{{- end }}

{{/*
DENO_V8_FLAGS for a Deno container with these resource limits: a 4 MiB semi-space (V8's default
young generation grows to tens of MiB a control-plane process does not need: docs/performance.md,
issue 21) and, with a memory limit (Mi or Gi), V8's old space capped at 60% of it, so the heap is
collected before the kernel's OOM killer is met (V8's own default cap is far above a container's
limit).
*/}}
{{- define "aether.v8Env" -}}
{{- $m := toString (default "" .memory) }}
{{- $mi := 0 }}
{{- if hasSuffix "Mi" $m }}{{ $mi = int (trimSuffix "Mi" $m) }}{{ end }}
{{- if hasSuffix "Gi" $m }}{{ $mi = mul (int (trimSuffix "Gi" $m)) 1024 }}{{ end }}
- name: DENO_V8_FLAGS
  value: --max-semi-space-size=4{{ if gt (int $mi) 0 }},--max-old-space-size={{ div (mul $mi 6) 10 }}{{ end }}
{{- end }}

{{/*
multicluster.eastWestGateway as a table (YAML, for fromYaml): the string form of earlier charts
(`eastWestGateway: <ip>:<port>`) is its address, with nothing deployed.
*/}}
{{- define "aether.eastWestGateway" -}}
{{- $g := .Values.multicluster.eastWestGateway }}
{{- if not (kindIs "map" $g) }}
{{- $g = dict "address" (toString (default "" $g)) "enabled" false }}
{{- end }}
{{- toYaml $g }}
{{- end }}

{{/*
The address the controller publishes (--east-west-gateway), checked: eastWestGateway.address,
else with the gateway deployed and service.loadBalancerIP set, <loadBalancerIP>:<port>; else
empty (flat mode). Refuses what the controller would refuse (not <ip>:<port>).
*/}}
{{- define "aether.eastWestAddress" -}}
{{- $g := fromYaml (include "aether.eastWestGateway" .) }}
{{- $a := toString (default "" $g.address) }}
{{- $lbIp := "" }}
{{- if and $g.enabled $g.service }}{{ $lbIp = toString (default "" $g.service.loadBalancerIP) }}{{ end }}
{{- if and (not $a) $lbIp }}
{{- $a = printf (ternary "[%s]:%v" "%s:%v" (contains ":" $lbIp)) $lbIp (int $g.port) }}
{{- end }}
{{- if and $a (not (regexMatch "^([0-9]{1,3}(\\.[0-9]{1,3}){3}|\\[[0-9a-fA-F:.]+\\]):[0-9]{1,5}$" $a)) }}
{{- fail (printf "multicluster.eastWestGateway.address %q must be <ip>:<port> ([v6]:port for IPv6)" $a) }}
{{- end }}
{{- $a }}
{{- end }}

{{/*
The node proxy's Envoy workers (agent.proxyConcurrency): a whole number from 1 to 1024.
*/}}
{{- define "aether.proxyConcurrency" -}}
{{- $n := .Values.agent.proxyConcurrency -}}
{{- if not (and (or (kindIs "float64" $n) (kindIs "int64" $n) (kindIs "int" $n)) (eq (float64 $n) (float64 (int $n))) (ge (int $n) 1) (le (int $n) 1024)) -}}
{{- fail (printf "agent.proxyConcurrency %v: a whole number of Envoy workers, 1-1024" $n) -}}
{{- end -}}
{{- int $n -}}
{{- end }}
