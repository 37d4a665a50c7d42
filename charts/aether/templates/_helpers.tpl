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
{{- range $flag := list "transparentCapture" "injectPodNdots" "generateMeshServices" }}
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
