#!/usr/bin/env bash
# Builds the real Kubernetes API machinery the sync contract tests run against:
# `apiextensions-apiserver` (the CustomResourceDefinition server, the same
# generic apiserver code kube-apiserver is made of) from Debian sid's Go
# sources, plus etcd from Debian's `etcd-server` package, and a set of test
# certificates (X.509 v3, the serving one for IP 127.0.0.1, a client one in
# `system:masters`).
#
# Prints the directory holding `bin/apiextensions-apiserver`, `bin/etcd` and
# `pki/` on stdout (everything else goes to stderr). The build (7-10 minutes on
# 2 cores) is cached under ~/.cache/capops/kube-apiserver-<versions>, keyed on
# the versions of the Go toolchain and apiextensions-apiserver packages, and
# ~/.cache/capops/kube-apiserver/current points at the newest build, which is
# where the tests look when CAPOPS_KUBE_APISERVER_DIR is not set.
#
# The system's apt configuration is left alone: sid is read through a private
# sources list, state and cache. When the Debian mirror cannot be reached the
# script says so and exits 0, unless CAPOPS_CI is set (then it fails, so CI
# really runs the contract tier).
set -euo pipefail

say() { printf 'kube-apiserver: %s\n' "$*" >&2; }
unavailable() {
  if [ -n "${CAPOPS_CI:-}" ]; then
    say "error: $* (CAPOPS_CI is set, so this is a failure)"
    exit 1
  fi
  say "skipped: $* (the contract tests against the real API server will skip)"
  exit 0
}

MIRROR="${CAPOPS_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/capops"
WORK="$CACHE_ROOT/kube-apiserver-work"
mkdir -p "$WORK/apt/lists/partial" "$WORK/apt/archives/partial" "$WORK/debs"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

# A private view of sid: the system's apt lists and sources are untouched.
cat >"$WORK/sid.list" <<EOF
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR sid main
EOF
APT_OPTS=(
  -o "Dir::Etc::SourceList=$WORK/sid.list"
  -o "Dir::Etc::SourceParts=-"
  -o "Dir::State::Lists=$WORK/apt/lists"
  -o "Dir::Cache=$WORK/apt"
  -o "Dir::State::Status=$WORK/empty-status"
  -o "APT::Get::List-Cleanup=false"
  -o "Acquire::Retries=3"
  -o "APT::Sandbox::User=root"
  -o "Acquire::http::Timeout=30"
)
: >"$WORK/empty-status"

# Refresh the package lists at most once a day.
lists_age=$(( $(date +%s) - $(stat -c %Y "$WORK/apt/lists/lock" 2>/dev/null || echo 0) ))
if [ "$lists_age" -gt 86400 ] || ! ls "$WORK"/apt/lists/*Packages* >/dev/null 2>&1; then
  say "reading Debian sid's package lists from $MIRROR"
  # apt-get update only warns when a mirror cannot be reached: check for the lists.
  apt-get "${APT_OPTS[@]}" -qq update >&2 || true
  if ! ls "$WORK"/apt/lists/*sid*Packages* >/dev/null 2>&1; then
    unavailable "cannot read Debian sid's package lists from $MIRROR"
  fi
  touch "$WORK/apt/lists/lock"
fi

version_of() { { apt-cache "${APT_OPTS[@]}" show --no-all-versions "$1" 2>/dev/null || true; } | sed -n 's/^Version: //p' | head -1; }
EXT_PKG=golang-k8s-apiextensions-apiserver-dev
ext_version=$(version_of "$EXT_PKG")
[ -n "$ext_version" ] || unavailable "Debian sid has no $EXT_PKG"
# golang-go depends on golang-1.NN-go: that is the toolchain sid builds with.
go_pkg=$({ apt-cache "${APT_OPTS[@]}" depends golang-go 2>/dev/null || true; } | sed -n 's/^ *Depends: \(golang-1\.[0-9]*-go\)$/\1/p' | head -1)
[ -n "$go_pkg" ] || unavailable "cannot tell which Go toolchain Debian sid's golang-go uses"
go_version=$(version_of "$go_pkg")
src_pkg="${go_pkg%-go}-src"

key=$(printf '%s' "apiextensions-$ext_version-$go_pkg-$go_version" | tr -c 'A-Za-z0-9.+-' '_')
OUT="$CACHE_ROOT/kube-apiserver-$key"

if [ -x "$OUT/bin/apiextensions-apiserver" ] && [ -x "$OUT/bin/etcd" ] && [ -s "$OUT/pki/client.key" ]; then
  say "cached: $OUT"
else
  say "building apiextensions-apiserver $ext_version with $go_pkg $go_version into $OUT"
  started=$(date +%s)
  rm -rf "$OUT.tmp"; mkdir -p "$OUT.tmp/bin" "$OUT.tmp/pki" "$OUT.tmp/root"

  # The recursive dependency closure: only Go source packages are needed.
  mapfile -t debs < <(
    { echo "$go_pkg"; echo "$src_pkg"; echo "$EXT_PKG";
      apt-cache "${APT_OPTS[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
        --no-breaks --no-replaces --no-enhances "$EXT_PKG" 2>/dev/null \
        | sed -n -E 's/^ *\|?(Pre)?Depends: (golang-[^ <>]*-dev)$/\2/p; s/^(golang-[^ <>]*-dev)$/\1/p'
    } | sort -u)
  say "${#debs[@]} packages to download"
  (cd "$WORK/debs" && apt-get "${APT_OPTS[@]}" -qq download "${debs[@]}" >&2) \
    || unavailable "cannot download the Go sources from $MIRROR"
  for pkg in "${debs[@]}"; do
    f=$(ls "$WORK/debs/${pkg}_"*.deb 2>/dev/null | sort -V | tail -1)
    [ -n "$f" ] || { say "error: $pkg was not downloaded"; exit 1; }
    dpkg -x "$f" "$OUT.tmp/root"
  done

  root="$OUT.tmp/root"
  go_minor="${go_pkg#golang-}"; go_minor="${go_minor%-go}"   # golang-1.27-go -> 1.27
  goroot="$root/usr/lib/go-$go_minor"
  [ -x "$goroot/bin/go" ] && [ -d "$goroot/src/runtime" ] \
    || { say "error: no Go toolchain at $goroot after unpacking $go_pkg and $src_pkg"; exit 1; }
  export GOROOT="$goroot" GOPATH="$root/usr/share/gocode" GO111MODULE=off GOPROXY=off \
    GOTOOLCHAIN=local CGO_ENABLED=0 GOCACHE="$CACHE_ROOT/go-build-cache"
  "$goroot/bin/go" version >&2
  "$goroot/bin/go" build -ldflags "-s -w" -o "$OUT.tmp/bin/apiextensions-apiserver" \
    k8s.io/apiextensions-apiserver >&2
  rm -rf "$root"

  # etcd from bookworm (the system's own suite): installed once, copied into the cache.
  if ! command -v etcd >/dev/null 2>&1 && [ ! -x /usr/bin/etcd ]; then
    say "installing etcd-server"
    $SUDO apt-get -qq update >&2 || unavailable "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get -qq install -y --no-install-recommends etcd-server >&2 \
      || unavailable "cannot install etcd-server"
    # The package may start the service; the tests start their own instances.
    $SUDO systemctl disable --now etcd >/dev/null 2>&1 || true
  fi
  cp "$(command -v etcd || echo /usr/bin/etcd)" "$OUT.tmp/bin/etcd"

  # Test certificates: a CA, a serving certificate for 127.0.0.1, a client in system:masters.
  pki="$OUT.tmp/pki"
  openssl_q() { openssl "$@" 2>/dev/null; }
  openssl_q genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/ca.key"
  openssl_q req -x509 -new -key "$pki/ca.key" -subj "/CN=capops-test-ca" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$pki/ca.crt"
  issue() { # name subject extensions
    openssl_q genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/$1.key"
    openssl_q req -new -key "$pki/$1.key" -subj "$2" -out "$pki/$1.csr"
    printf '%s\n' "$3" >"$pki/$1.ext"
    openssl_q x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
      -days 3650 -sha256 -extfile "$pki/$1.ext" -out "$pki/$1.crt"
    rm -f "$pki/$1.csr" "$pki/$1.ext"
  }
  issue serving "/CN=127.0.0.1" "$(printf '%s\n' 'basicConstraints=critical,CA:FALSE' \
    'keyUsage=critical,digitalSignature,keyEncipherment' 'extendedKeyUsage=serverAuth' \
    'subjectAltName=IP:127.0.0.1,DNS:localhost')"
  issue client "/O=system:masters/CN=capops-test" "$(printf '%s\n' 'basicConstraints=critical,CA:FALSE' \
    'keyUsage=critical,digitalSignature,keyEncipherment' 'extendedKeyUsage=clientAuth')"
  openssl x509 -in "$pki/serving.crt" -noout -text 2>/dev/null | grep -q 'Version: 3' \
    || { say "error: the serving certificate is not X.509 v3"; exit 1; }

  printf 'apiextensions-apiserver %s\n%s %s\netcd %s\n' "$ext_version" "$go_pkg" "$go_version" \
    "$("$OUT.tmp/bin/etcd" --version 2>/dev/null | head -1)" >"$OUT.tmp/VERSIONS"
  rm -rf "$OUT"; mv "$OUT.tmp" "$OUT"
  rm -rf "$WORK/debs"   # 280 MB of sources; the Go build cache stays for the next version
  say "built in $(( $(date +%s) - started ))s"
fi

mkdir -p "$CACHE_ROOT/kube-apiserver"
ln -sfn "$OUT" "$CACHE_ROOT/kube-apiserver/current"
echo "$OUT"
