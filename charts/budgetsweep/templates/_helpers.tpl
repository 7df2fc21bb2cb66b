{{/* The release's full name, at most 63 characters. */}}
{{- define "budgetsweep.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "budgetsweep.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "budgetsweep.labels" -}}
{{ include "budgetsweep.selectorLabels" . }}
app.kubernetes.io/part-of: budgetsweep
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "budgetsweep.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "budgetsweep.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The namespace whose sweeps are reconciled in scope "namespace"; empty in scope "cluster". */}}
{{- define "budgetsweep.watchNamespace" -}}
{{- if eq .Values.scope "namespace" -}}
{{- default .Release.Namespace .Values.watchNamespace -}}
{{- end -}}
{{- end -}}

{{- define "budgetsweep.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
What the operator may do to sweeps, their trials, trial pods and events; the same rules for the
Role (scope namespace) and the ClusterRole (scope cluster). No wildcards.
*/}}
{{- define "budgetsweep.operatorRules" -}}
- apiGroups: [budgetsweep.dev]
  resources: [budgetsweeps]
  verbs: [get, list, watch, update, patch]
- apiGroups: [budgetsweep.dev]
  resources: [budgetsweeps/status]
  verbs: [get, update, patch]
- apiGroups: [budgetsweep.dev]
  resources: [budgetsweeps/finalizers]
  verbs: [update]
- apiGroups: [budgetsweep.dev]
  resources: [budgetsweeptrials]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [budgetsweep.dev]
  resources: [budgetpools]
  verbs: [get, list, watch]
- apiGroups: [budgetsweep.dev]
  resources: [budgetpools/status]
  verbs: [get, update, patch]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, create, delete, patch]
# The tail of a trainer that exited 0 short of what it was asked for (its end's output).
- apiGroups: [""]
  resources: [pods/log]
  verbs: [get]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create, patch]
{{- end -}}
