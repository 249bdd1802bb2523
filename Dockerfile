# otelcol-ttft container image: ocb builds the distribution, a slim Debian
# runtime runs it as a non-root user.
#   docker build -t otelcol-ttft:0.1.0 .
#   docker run --rm -p 4317:4317 -p 4318:4318 -p 8888:8888 -p 8889:8889 -p 13133:13133 \
#     -e PROMETHEUS_REMOTE_WRITE_URL=http://prometheus:9090/api/v1/write otelcol-ttft:0.1.0
# The default config is the aggregating tier: it takes request records (OTLP
# logs from the other tiers) and serves metrics; it accepts no spans. Apps'
# spans go to the trace tier: --config=/etc/otelcol-ttft/gateway-trace.yaml
# (it needs TTFT_AGGREGATOR_HOSTNAME), agents run agent.yaml. The Kubernetes
# manifests in deploy/kubernetes mount their own configs and pass --config.

FROM golang:1.26 AS build
WORKDIR /src
# Module downloads get their own layer so source edits do not refetch them.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN make build && ./dist/otelcol-ttft components >/dev/null

FROM debian:trixie-slim
# CA roots for TLS exporters (remote write, OTLP to a SaaS backend).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 otelcol \
 && useradd --uid 65532 --gid 65532 --no-create-home --shell /usr/sbin/nologin otelcol \
 && install -d -o 65532 -g 65532 /var/lib/otelcol-ttft
# file_storage (agent.yaml, gateway-trace.yaml) keeps its checkpoints and
# queues there: owned by the user the collector runs as, so it can write.
COPY --from=build /src/dist/otelcol-ttft /usr/local/bin/otelcol-ttft
COPY config/agent.yaml config/gateway-trace.yaml config/gateway-aggregate.yaml /etc/otelcol-ttft/
USER 65532:65532
# OTLP gRPC, OTLP HTTP, own telemetry, Prometheus exporter, health check
EXPOSE 4317 4318 8888 8889 13133
ENTRYPOINT ["/usr/local/bin/otelcol-ttft"]
CMD ["--config=/etc/otelcol-ttft/gateway-aggregate.yaml"]
