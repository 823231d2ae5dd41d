#!/usr/bin/env bash
# Installs what the browser tests need beyond pip: Debian's chromium (Playwright cannot download a
# browser here). Does nothing when /usr/bin/chromium is already there. Needs root (or sudo).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
