#!/usr/bin/env bash
# Makes sure Debian's `prometheus` package is installed here, for the metrics tests: `promtool` checks the metrics
# endpoint's output and runs the alert rules' unit tests, and a real Prometheus server scrapes a running `schedule`.
# The package's own service is not used (tests start their own server on a free loopback port).
set -euo pipefail
if command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1; then
  echo "prometheus: already installed ($(prometheus --version 2>&1 | head -1))"; exit 0
fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "prometheus: installing Debian's prometheus (the server and promtool)"
export DEBIAN_FRONTEND=noninteractive
install() { $SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }
install || { $SUDO apt-get update -qq && install; }
command -v promtool >/dev/null 2>&1 || { echo "prometheus: the package did not install promtool" >&2; exit 1; }
# Debian's package may start its own server on :9090 where an init system runs; the tests need none of it.
echo "prometheus: installed ($(prometheus --version 2>&1 | head -1))"
