#!/usr/bin/env bash
# Installs Debian's prometheus package (prometheus + promtool) when missing.
# The package's service is not started here; the e2e tests run the binary on loopback.
set -euo pipefail
if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null
command -v prometheus && prometheus --version | head -1
