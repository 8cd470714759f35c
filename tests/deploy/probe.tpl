{{- /*
deploy-check's probe (tests/deploy/check.sh): added to a copy of the chart, it prints what Helm
computed for the release, as JSON (which is YAML): the merged values, the chart's appVersion and
NOTES.txt rendered. chartcheck compares the manifest with these.
*/ -}}
{{- $notes := include (printf "%s/templates/NOTES.txt" .Chart.Name) . -}}
{{- dict "values" .Values "appVersion" .Chart.AppVersion "notes" $notes | toJson }}
