#!/usr/bin/env bash
# Makes sure the Debian packages that check the service recipes are installed here: `prometheus` (`promtool` checks the
# metrics endpoint's output and runs the alert rules' unit tests, and a real Prometheus server scrapes a running
# `schedule`) and `systemd` (`systemd-analyze verify` checks the systemd units). The package's own Prometheus service
# is not used: tests start their own server on a free loopback port.
set -euo pipefail
missing=()
command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
if [ ${#missing[@]} -eq 0 ]; then
  echo "ops tools: already installed ($(prometheus --version 2>&1 | head -1); $(systemd-analyze --version | head -1))"; exit 0
fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "ops tools: installing Debian's ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
install() { $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
install || { $SUDO apt-get update -qq && install; }
command -v promtool >/dev/null 2>&1 || { echo "ops tools: the prometheus package did not install promtool" >&2; exit 1; }
command -v systemd-analyze >/dev/null 2>&1 || { echo "ops tools: the systemd package did not install systemd-analyze" >&2; exit 1; }
echo "ops tools: installed ($(prometheus --version 2>&1 | head -1); $(systemd-analyze --version | head -1))"
