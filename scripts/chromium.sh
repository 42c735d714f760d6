#!/usr/bin/env bash
# Makes sure a Chromium is installed here, for the browser test tier: Debian's `chromium` package (playwright-core
# drives that binary; nothing downloads a browser).
set -euo pipefail
if [ -n "${CHROMIUM_PATH:-}" ] && [ -x "$CHROMIUM_PATH" ]; then echo "chromium: $CHROMIUM_PATH"; exit 0; fi
if command -v chromium >/dev/null 2>&1; then echo "chromium: already installed ($(command -v chromium))"; exit 0; fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "chromium: installing Debian's chromium"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y -qq chromium >/dev/null || { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium >/dev/null; }
command -v chromium >/dev/null 2>&1 || { echo "chromium: the package did not install a chromium binary" >&2; exit 1; }
echo "chromium: installed ($(command -v chromium))"
