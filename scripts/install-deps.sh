#!/usr/bin/env bash
# Install modalloco's build and test dependencies on Debian 12 (as root, or with sudo).
# Packages already present are skipped, so this is quick on a prepared machine.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libsuitesparse-dev liblapacke-dev
      libopenblas-dev libarpack2-dev libcjson-dev libcmocka-dev zlib1g-dev tetgen
      libopenmpi-dev openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
