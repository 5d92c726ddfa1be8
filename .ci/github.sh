#!/usr/bin/env bash
# What the GitHub tests need besides cargo: bash, curl, tar and sha256sum for
# the action's installer (tests/action.rs), and the system's root certificates
# (octocrab's rustls client loads them even to reach the local fake GitHub of
# tests/github.rs). The fake GitHub itself is in-repo (Rust).
set -euo pipefail
missing=()
for tool in curl tar sha256sum; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
[ -s /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq curl tar coreutils ca-certificates >/dev/null
fi
