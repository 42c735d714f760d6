#!/usr/bin/env bash
# Makes sure a Docker engine runs here, for the containers test tier: installs Debian's docker.io when dockerd is
# missing, then starts it without a bridge or iptables rules (containers use the host network; nothing leaves loopback).
set -euo pipefail
if docker info >/dev/null 2>&1; then echo "docker engine: already running"; exit 0; fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! command -v dockerd >/dev/null 2>&1; then
  echo "docker engine: installing Debian's docker.io"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq docker.io >/dev/null || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq docker.io >/dev/null; }
fi
LOG="${TMPDIR:-/tmp}/pool-export-dockerd.log"
echo "docker engine: starting dockerd --bridge=none --iptables=false (log: $LOG)"
$SUDO sh -c "nohup dockerd --bridge=none --iptables=false >'$LOG' 2>&1 &"
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then echo "docker engine: ready"; exit 0; fi
  sleep 1
done
echo "docker engine: dockerd did not start within 60 s; its log follows" >&2
tail -20 "$LOG" >&2
exit 1
