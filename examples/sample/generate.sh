#!/usr/bin/env bash
# Writes the bundled sample gateway export (infro_csv). The command below is
# the one that produced the committed file: the same flags always give the same
# bytes, and a test (examples/sample/sample_test.go) checks that they still do.
#   examples/sample/generate.sh [OUT]     default OUT: examples/sample/gateway-export.csv
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-examples/sample/gateway-export.csv}
${GO:-go} run ./cmd/gen-gateway-export \
  -rows 25000 -seed 1 -start 2026-11-30T00:00:00Z -span 24h -out "$out"
