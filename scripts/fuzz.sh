#!/usr/bin/env bash
# Runs every Fuzz* target in the module, and in the instrumentation/go module,
# for the given time each (default 20s).
set -euo pipefail
fuzztime=${1:-20s}
fuzz_module() {
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
    echo "== $pkg $target ($fuzztime)"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -fuzzminimizetime=5s "$pkg"
  done
done
}
fuzz_module
(cd instrumentation/go && fuzz_module)
