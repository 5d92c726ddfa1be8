#!/usr/bin/env bash
# Installs what the usage-pull and inventory tests run against: Debian's
# prometheus package (prometheus and promtool, 2.42 on bookworm; the daemon is
# not started), openssl (certificates for the TLS test) and gcc (the fake
# libnvidia-ml). apt is fast here (about 20 s), so nothing is cached.
set -euo pipefail
need=()
command -v prometheus >/dev/null && command -v promtool >/dev/null || need+=(prometheus)
command -v openssl >/dev/null || need+=(openssl)
command -v gcc >/dev/null || need+=(gcc libc6-dev)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
prometheus --version 2>&1 | head -1
