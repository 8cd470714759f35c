{{/* Named templates. */}}

{{/* The chart's name, or nameOverride. */}}
{{- define "hostprof.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The objects' name: fullnameOverride, or <release>-<chart> unless the release is the chart. */}}
{{- define "hostprof.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if eq .Release.Name $name -}}
{{- $name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "hostprof.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hostprof.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hostprof.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | trunc 63 | trimSuffix "-" }}
{{ include "hostprof.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "hostprof.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "hostprof.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The Secret with the token: the chart's own when token.value is given, else existingSecret. */}}
{{- define "hostprof.tokenSecretName" -}}
{{- if .Values.token.value -}}
{{- printf "%s-token" (include "hostprof.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- required "token.header is set: give the token with --set-file token.value=FILE, or name a Secret in token.existingSecret" .Values.token.existingSecret -}}
{{- end -}}
{{- end -}}

{{- define "hostprof.tokenSecretKey" -}}
{{- if .Values.token.value -}}
token
{{- else -}}
{{- required "token.existingSecretKey: the key of token.existingSecret that holds the token" .Values.token.existingSecretKey -}}
{{- end -}}
{{- end -}}

{{/* Where the token Secret is mounted; config.export.otlp.header_files names a file in it. */}}
{{- define "hostprof.tokenDir" -}}
/var/run/secrets/hostprof
{{- end -}}

{{/* Where kubelet.caHostPath is mounted. */}}
{{- define "hostprof.kubeletCAFile" -}}
/var/run/hostprof/kubelet-ca.crt
{{- end -}}

{{/*
The agent's config file: .Values.config, plus what the chart's own values decide. A deep copy,
so that .Values stays as the user gave it.
*/}}
{{- define "hostprof.config" -}}
{{- $cfg := deepCopy .Values.config -}}
{{- $_ := set $cfg "http_listen" (printf ":%v" .Values.port) -}}
{{- if .Values.token.header -}}
{{- $file := printf "%s/%s" (include "hostprof.tokenDir" .) (include "hostprof.tokenSecretKey" .) -}}
{{- $_ = set $cfg.export.otlp.header_files .Values.token.header $file -}}
{{- end -}}
{{- if .Values.kubelet.caHostPath -}}
{{- $_ = set $cfg.kubernetes "ca_file" (include "hostprof.kubeletCAFile" .) -}}
{{- end -}}
{{- toYaml $cfg -}}
{{- end -}}
