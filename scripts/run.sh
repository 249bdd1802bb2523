#!/usr/bin/env bash
# make run: runs dist/otelcol-ttft on config/default.yaml (the bundled sample
# export plus OTLP on localhost:4317/4318) and prints a per-target TTFT summary
# every 15 s until Ctrl-C (or SIGTERM), which stops the collector too.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
BIN=${OTELCOL_TTFT_BIN:-dist/otelcol-ttft}
CONFIG=${CONFIG:-config/default.yaml}
# Where config/default.yaml serves metrics and health; override with another config.
METRICS=${METRICS_URL:-http://localhost:8889/metrics}
HEALTH=${HEALTH_URL:-http://localhost:13133/}

if [ ! -s examples/sample/gateway-export.csv ]; then
  echo "run: generating the sample export (examples/sample/generate.sh)"
  examples/sample/generate.sh
fi
RUN_DIR=${RUN_DIR:-.run}
mkdir -p "$RUN_DIR"
"$GO" build -o "$RUN_DIR/ttft-summary" ./cmd/ttft-summary

log=$RUN_DIR/otelcol-ttft.log
"$BIN" --config "$CONFIG" >"$log" 2>&1 &
pid=$!
summary=
stop() {
  if [ -n "$summary" ]; then kill -TERM "$summary" 2>/dev/null || true; fi
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    echo "run: collector stopped"
  fi
}
trap stop EXIT
trap 'exit 0' INT TERM

# Wait for the health check so a port clash shows up as an error, not a silent summary.
for _ in $(seq 1 60); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "run: otelcol-ttft exited during start-up; the end of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
  if ! command -v curl >/dev/null; then sleep 2; break; fi
  if curl -fsS -o /dev/null "$HEALTH" 2>/dev/null; then break; fi
  sleep 0.5
done

cat <<MSG
run: otelcol-ttft is up (pid $pid, config $CONFIG, log $log)
  OTLP      localhost:4317 (gRPC), localhost:4318 (HTTP) with config/default.yaml
  metrics   curl -s $METRICS | grep '^ttft_'
  sample    examples/sample/gateway-export.csv (append rows to see them counted)
The first summary appears after the connector's first flush (flush_interval 15s); Ctrl-C stops both.
MSG
# In the background and waited for, so a SIGTERM to this script (or to make)
# runs the traps at once instead of after the summary exits, which it never does.
"$RUN_DIR/ttft-summary" -url "$METRICS" -interval 15s &
summary=$!
if ! wait "$summary"; then
  summary=
  echo "run: the summary stopped (above); the collector keeps running on $CONFIG, Ctrl-C stops it" >&2
  wait "$pid"
fi
