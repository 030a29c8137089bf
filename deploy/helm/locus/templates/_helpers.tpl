{{/* Names, labels and the configuration every Locus service derives from the values. */}}

{{/* The prefix of every object: the release name (or fullnameOverride). */}}
{{- define "locus.prefix" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{/* <prefix>-<component>; call with (dict "root" $ "component" "nats"). */}}
{{- define "locus.name" -}}
{{- printf "%s-%s" (include "locus.prefix" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "locus.selectorLabels" -}}
app.kubernetes.io/name: {{ .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{- define "locus.labels" -}}
{{ include "locus.selectorLabels" . }}
app.kubernetes.io/part-of: locus
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* image: {repository, tag} -> repository:tag */}}
{{- define "locus.thirdPartyImage" -}}
{{- printf "%s:%s" .repository (toString .tag) -}}
{{- end -}}

{{/* The image of a Locus service; call with (dict "root" $ "name" "gateway" "svc" $cfg). */}}
{{- define "locus.serviceImage" -}}
{{- $image := .root.Values.image -}}
{{- $repository := printf "%s%s" $image.repositoryPrefix .name -}}
{{- if (.svc.image | default dict).repository -}}{{- $repository = .svc.image.repository -}}{{- end -}}
{{- if $image.registry -}}{{- $repository = printf "%s/%s" (trimSuffix "/" $image.registry) $repository -}}{{- end -}}
{{- $tag := default .root.Chart.AppVersion $image.tag -}}
{{- if (.svc.image | default dict).tag -}}{{- $tag = .svc.image.tag -}}{{- end -}}
{{- printf "%s:%s" $repository (toString $tag) -}}
{{- end -}}

{{/* Hardened container securityContext shared by the backends (not the Locus services, which
     take theirs from serviceDefaults). Call with a bool: readOnlyRootFilesystem. */}}
{{- define "locus.backendSecurityContext" -}}
runAsNonRoot: true
allowPrivilegeEscalation: false
readOnlyRootFilesystem: {{ . }}
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Pod securityContext for a backend running as `uid`. */}}
{{- define "locus.backendPodSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ . }}
runAsGroup: {{ . }}
fsGroup: {{ . }}
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Where the bus is. */}}
{{- define "locus.natsUrl" -}}
{{- if .Values.nats.enabled -}}
{{- printf "%s://%s:4222" (ternary "tls" "nats" .Values.nats.tls.enabled) (include "locus.name" (dict "root" . "component" "nats")) -}}
{{- else -}}
{{- required "nats.enabled=false needs externalNats.url (nats://host:4222)" .Values.externalNats.url -}}
{{- end -}}
{{- end -}}

{{/* Where services send OTLP; empty when tracing export is off. */}}
{{- define "locus.otlpEndpoint" -}}
{{- if .Values.otelCollector.enabled -}}
{{- printf "%s://%s:4317" (ternary "https" "http" .Values.tls.internal.enabled) (include "locus.name" (dict "root" . "component" "otel-collector")) -}}
{{- else -}}
{{- .Values.externalOtlp.endpoint -}}
{{- end -}}
{{- end -}}

{{- define "locus.postgresSecretName" -}}
{{- if .Values.postgresql.auth.existingSecret -}}
{{- .Values.postgresql.auth.existingSecret -}}
{{- else -}}
{{- include "locus.name" (dict "root" . "component" "postgresql") -}}
{{- end -}}
{{- end -}}

{{- define "locus.grafanaSecretName" -}}
{{- if .Values.grafana.admin.existingSecret -}}
{{- .Values.grafana.admin.existingSecret -}}
{{- else -}}
{{- include "locus.name" (dict "root" . "component" "grafana") -}}
{{- end -}}
{{- end -}}

{{/* The Secret with the services' NATS user and password (keys `user`, `password`); empty when
     an external NATS needs none. */}}
{{- define "locus.natsSecretName" -}}
{{- if .Values.nats.enabled -}}
{{- .Values.nats.auth.existingSecret | default (include "locus.name" (dict "root" . "component" "nats-auth")) -}}
{{- else -}}
{{- .Values.externalNats.existingSecret -}}
{{- end -}}
{{- end -}}

{{- define "locus.serviceTokenSecretName" -}}
{{- .Values.serviceToken.existingSecret | default (include "locus.name" (dict "root" . "component" "service-token")) -}}
{{- end -}}

{{- define "locus.adminKeySecretName" -}}
{{- .Values.services.gateway.adminKey.existingSecret | default (include "locus.name" (dict "root" . "component" "gateway-admin-key")) -}}
{{- end -}}

{{/* The base64 value for `key` of the generated Secret `name`: what the cluster's copy holds,
     so that upgrades keep it, else `generated`. Call with
     (dict "root" $ "name" n "key" k "generated" v). */}}
{{- define "locus.keptSecretValue" -}}
{{- $existing := lookup "v1" "Secret" .root.Release.Namespace .name -}}
{{- dig "data" .key (.generated | b64enc) $existing -}}
{{- end -}}

{{/* The components that get a <release>-<component>-tls certificate, as a JSON list. */}}
{{- define "locus.tlsComponents" -}}
{{- $components := list -}}
{{- if .Values.tls.internal.enabled -}}
{{- range $name, $svc := .Values.services -}}
{{- if $svc.enabled -}}{{- $components = append $components $name -}}{{- end -}}
{{- end -}}
{{- if .Values.otelCollector.enabled -}}{{- $components = append $components "otel-collector" -}}{{- end -}}
{{- if and .Values.mcp.enabled .Values.services.gateway.enabled -}}{{- $components = append $components "mcp" -}}{{- end -}}
{{- end -}}
{{- if and .Values.nats.enabled .Values.nats.tls.enabled -}}{{- $components = append $components "nats" -}}{{- end -}}
{{- toJson $components -}}
{{- end -}}

{{/* The DNS names a component's certificate holds: its Service, and for NATS every server of
     the StatefulSet (the names its cluster routes dial). Call with (dict "root" $ "component" c). */}}
{{- define "locus.tlsDnsNames" -}}
{{- $name := include "locus.name" . -}}
{{- $namespace := .root.Release.Namespace -}}
{{- $names := list $name (printf "%s.%s" $name $namespace) (printf "%s.%s.svc" $name $namespace) -}}
{{- if eq .component "nats" -}}
{{- $names = concat $names (list (printf "*.%s-headless" $name) (printf "*.%s-headless.%s.svc" $name $namespace)) -}}
{{- end -}}
{{- toJson $names -}}
{{- end -}}

{{/* "true" when a service's metadata goes to PostgreSQL (in the chart or external). */}}
{{- define "locus.databaseConfigured" -}}
{{- if or .Values.postgresql.enabled .Values.externalDatabase.existingSecret -}}true{{- end -}}
{{- end -}}

{{- define "locus.opensearchConfigured" -}}
{{- if or .Values.opensearch.enabled .Values.externalOpenSearch.url .Values.externalOpenSearch.existingSecret -}}true{{- end -}}
{{- end -}}

{{- define "locus.qdrantConfigured" -}}
{{- if or .Values.qdrant.enabled .Values.externalQdrant.url -}}true{{- end -}}
{{- end -}}

{{/* The env entries that take a value from a Secret, for service `name` (rendered first, so
     that $(POSTGRES_PASSWORD) in a later value expands). Call with (dict "root" $ "name" n "svc" $cfg). */}}
{{- define "locus.secretEnv" -}}
{{- $root := .root -}}
{{- with include "locus.natsSecretName" $root }}
- name: LOCUS_NATS_USER
  valueFrom:
    secretKeyRef: {name: {{ . }}, key: user}
- name: LOCUS_NATS_PASSWORD
  valueFrom:
    secretKeyRef: {name: {{ . }}, key: password}
{{- end }}
{{- if and .svc.database $root.Values.postgresql.enabled }}
- name: POSTGRES_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "locus.postgresSecretName" $root }}
      key: {{ $root.Values.postgresql.auth.passwordKey }}
{{- else if and .svc.database $root.Values.externalDatabase.existingSecret }}
- name: LOCUS_{{ upper .name }}_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $root.Values.externalDatabase.existingSecret }}
      key: {{ .name }}-database-url
{{- end }}
{{- if and (eq .name "retrieval") (not $root.Values.opensearch.enabled) $root.Values.externalOpenSearch.existingSecret }}
- name: LOCUS_RETRIEVAL_OPENSEARCH_URL
  valueFrom:
    secretKeyRef:
      name: {{ $root.Values.externalOpenSearch.existingSecret }}
      key: {{ $root.Values.externalOpenSearch.secretKey }}
{{- end }}
{{- end -}}

{{/* Plain settings the chart derives for service `name`, as a YAML map (values' env wins). */}}
{{- define "locus.backendEnv" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $env := dict -}}
{{- $prefix := printf "LOCUS_%s_" (upper $name) -}}
{{- $_ := set $env (printf "%sGRPC_HOST" $prefix) "0.0.0.0" -}}
{{- $_ := set $env (printf "%sGRPC_PORT" $prefix) (toString .svc.port) -}}
{{- $_ := set $env (printf "%sDATA_DIR" $prefix) "/var/lib/locus" -}}
{{- if and .svc.database $root.Values.postgresql.enabled -}}
{{- $host := include "locus.name" (dict "root" $root "component" "postgresql") -}}
{{- $_ := set $env (printf "%sDATABASE_URL" $prefix) (printf "postgresql://%s:$(POSTGRES_PASSWORD)@%s:5432/locus_%s" $root.Values.postgresql.auth.username $host $name) -}}
{{- end -}}
{{- if eq $name "ingestion" -}}
{{- $stages := list -}}
{{- range $stage := list "ast" "retrieval" "impact" -}}
{{- if (index $root.Values.services $stage).enabled -}}{{- $stages = append $stages $stage -}}{{- end -}}
{{- end -}}
{{- $_ := set $env "LOCUS_INGESTION_REQUIRED_STAGES" (join "," $stages) -}}
{{- $_ := set $env "LOCUS_INGESTION_EMBEDDING_STAGES" (ternary "vectors" "" $root.Values.services.retrieval.enabled) -}}
{{- end -}}
{{- if eq $name "retrieval" -}}
{{- if $root.Values.opensearch.enabled -}}
{{- $_ := set $env "LOCUS_RETRIEVAL_BM25_BACKEND" "opensearch" -}}
{{- $_ := set $env "LOCUS_RETRIEVAL_OPENSEARCH_URL" (printf "http://%s:9200" (include "locus.name" (dict "root" $root "component" "opensearch"))) -}}
{{- else if or $root.Values.externalOpenSearch.url $root.Values.externalOpenSearch.existingSecret -}}
{{- $_ := set $env "LOCUS_RETRIEVAL_BM25_BACKEND" "opensearch" -}}
{{- if not $root.Values.externalOpenSearch.existingSecret -}}
{{- $_ := set $env "LOCUS_RETRIEVAL_OPENSEARCH_URL" $root.Values.externalOpenSearch.url -}}
{{- end -}}
{{- end -}}
{{- if $root.Values.qdrant.enabled -}}
{{- $_ := set $env "LOCUS_RETRIEVAL_VECTOR_BACKEND" "qdrant" -}}
{{- $_ := set $env "LOCUS_RETRIEVAL_QDRANT_URL" (printf "http://%s:6333" (include "locus.name" (dict "root" $root "component" "qdrant"))) -}}
{{- else if $root.Values.externalQdrant.url -}}
{{- $_ := set $env "LOCUS_RETRIEVAL_VECTOR_BACKEND" "qdrant" -}}
{{- $_ := set $env "LOCUS_RETRIEVAL_QDRANT_URL" $root.Values.externalQdrant.url -}}
{{- end -}}
{{- if $root.Values.embeddings.url -}}
{{- $_ := set $env "LOCUS_RETRIEVAL_EMBEDDINGS_URL" $root.Values.embeddings.url -}}
{{- end -}}
{{- end -}}
{{- if eq $name "answer" -}}
{{- if $root.Values.vllm.enabled -}}
{{- $_ := set $env "LOCUS_LLM_BASE_URL" (printf "http://%s:8000/v1" (include "locus.name" (dict "root" $root "component" "vllm"))) -}}
{{- $_ := set $env "LOCUS_LLM_MODEL" $root.Values.vllm.servedModelName -}}
{{- else if $root.Values.externalLLM.baseUrl -}}
{{- $_ := set $env "LOCUS_LLM_BASE_URL" $root.Values.externalLLM.baseUrl -}}
{{- $_ := set $env "LOCUS_LLM_MODEL" (required "externalLLM.baseUrl needs externalLLM.model" $root.Values.externalLLM.model) -}}
{{- end -}}
{{- end -}}
{{- range $key, $value := .svc.env -}}
{{- $_ := set $env $key (toString $value) -}}
{{- end -}}
{{- toYaml $env -}}
{{- end -}}

{{/* One probe of a Locus service against the standard gRPC health service: the kubelet's native
     gRPC probe, or with tls.internal.enabled (the kubelet's gRPC probe speaks no TLS) the same
     check made over mTLS by Python in the container, with the pod's own certificate. Call with
     (dict "root" $ "name" n "port" p "probe" <serviceDefaults.probes entry>). */}}
{{- define "locus.healthProbe" -}}
{{- if .root.Values.tls.internal.enabled -}}
exec:
  command:
    - python
    - -c
    - |
      import sys, grpc
      from grpc_health.v1 import health_pb2, health_pb2_grpc
      def read(name): return open("/var/run/secrets/locus/tls/" + name, "rb").read()
      credentials = grpc.ssl_channel_credentials(read("ca.crt"), read("tls.key"), read("tls.crt"))
      channel = grpc.secure_channel("127.0.0.1:{{ .port }}", credentials, options=[("grpc.ssl_target_name_override", "{{ include "locus.name" (dict "root" .root "component" .name) }}")])
      status = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=3).status
      sys.exit(status != health_pb2.HealthCheckResponse.SERVING)
{{- /* Starting Python takes longer than the native probe's call. */}}
{{ toYaml (merge (dict "timeoutSeconds" (max 5 (.probe.timeoutSeconds | default 1))) .probe) }}
{{- else -}}
grpc: {port: {{ .port }}}
{{ toYaml .probe }}
{{- end -}}
{{- end -}}

{{/* "true" when every replica of service `name` would see the same state, so it may scale out. */}}
{{- define "locus.stateIsShared" -}}
{{- $root := .root -}}
{{- if eq .name "retrieval" -}}
{{- if and (include "locus.opensearchConfigured" $root) (include "locus.qdrantConfigured" $root) -}}true{{- end -}}
{{- else if eq .name "ingestion" -}}
{{- if and (include "locus.databaseConfigured" $root) .svc.persistence.enabled (has "ReadWriteMany" .svc.persistence.accessModes) -}}true{{- end -}}
{{- else if .svc.database -}}
{{- include "locus.databaseConfigured" $root -}}
{{- else -}}true
{{- end -}}
{{- end -}}
