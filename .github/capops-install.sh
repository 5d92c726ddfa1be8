#!/usr/bin/env bash
# Installs capops for the GitHub Action (action.yml); docs/github.md explains it.
#
#   capops-install.sh resolve   pick the version; download the prebuilt release
#                               binary for this runner and verify its SHA-256, or
#                               say where a build goes (step outputs)
#   capops-install.sh build     build that version once with `cargo install --locked`
#                               (the action caches the result, keyed on version and source)
#
# Release assets are `capops-v<version>-<target>.tar.gz` (holding the `capops`
# binary) and `capops-v<version>-<target>.tar.gz.sha256` (`<hex>  <file>`), on the
# release `v<version>` of RELEASE_REPO. A checksum that does not match stops the
# job: it never falls back to something else.
set -euo pipefail

out() { echo "$1=$2" >> "$GITHUB_OUTPUT"; }

source_version() {
  sed -n 's/^version = "\(.*\)"$/\1/p' "$GITHUB_ACTION_PATH/Cargo.toml" | head -n 1
}

runner_target() {
  case "${RUNNER_OS:-}/${RUNNER_ARCH:-}" in
    Linux/X64) echo x86_64-unknown-linux-gnu ;;
    Linux/ARM64) echo aarch64-unknown-linux-gnu ;;
    macOS/X64) echo x86_64-apple-darwin ;;
    macOS/ARM64) echo aarch64-apple-darwin ;;
    *) echo "" ;;
  esac
}

sha256() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | awk '{print $1}'
  else shasum -a 256 "$1" | awk '{print $1}'; fi
}

resolve() {
  local own version
  own="$(source_version)"
  version="${INPUT_VERSION:-}"
  version="${version#v}"
  [ -n "$version" ] || version="$own"
  if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
    echo "::error title=capops::version \`$version\` is not a version such as 0.1.0"
    exit 2
  fi
  local build_root="$HOME/.cache/capops/build-$version"
  local from_source=false source_hash=release
  if [ "$version" = "$own" ]; then
    from_source=true
    source_hash="$(cd "$GITHUB_ACTION_PATH" && find Cargo.toml Cargo.lock src policies schemas -type f 2>/dev/null \
      | LC_ALL=C sort | xargs sha256sum 2>/dev/null | sha256sum | cut -c1-16)"
  fi
  out version "$version"
  out build-root "$build_root"
  out from-source "$from_source"
  out source-hash "$source_hash"

  local target; target="$(runner_target)"
  if [ -n "$target" ] && [ -n "${RELEASE_REPO:-}" ]; then
    local base="${GITHUB_SERVER_URL:-https://github.com}/$RELEASE_REPO/releases/download/v$version"
    local asset="capops-v$version-$target.tar.gz"
    local dir="$RUNNER_TEMP/capops-$version"
    mkdir -p "$dir"
    if curl -fsSL --retry 3 --max-time 120 -o "$dir/$asset" "$base/$asset" \
      && curl -fsSL --retry 3 --max-time 60 -o "$dir/$asset.sha256" "$base/$asset.sha256"; then
      local expected actual
      expected="$(awk '{print $1; exit}' "$dir/$asset.sha256")"
      actual="$(sha256 "$dir/$asset")"
      if [ -z "$expected" ] || [ "$expected" != "$actual" ]; then
        echo "::error title=capops::checksum mismatch for $asset (expected $expected, got $actual); refusing to run it"
        exit 1
      fi
      tar -xzf "$dir/$asset" -C "$dir" capops
      chmod +x "$dir/capops"
      echo "capops $version: prebuilt $target binary, SHA-256 $actual verified"
      out installed true
      out bin "$dir/capops"
      return
    fi
    echo "::notice title=capops::no prebuilt capops $version for $target in $RELEASE_REPO; building it once (cached afterwards)"
  fi
  out installed false
  out bin "$build_root/bin/capops"
}

build() {
  if ! command -v cargo >/dev/null; then
    echo "::error title=capops::no prebuilt release and no Rust toolchain to build capops; add dtolnay/rust-toolchain or use a release version"
    exit 1
  fi
  if [ "${FROM_SOURCE:-true}" = true ]; then
    cargo install --locked --quiet --path "$GITHUB_ACTION_PATH" --root "$BUILD_ROOT"
  else
    cargo install --locked --quiet --git "${GITHUB_SERVER_URL:-https://github.com}/$RELEASE_REPO" \
      --tag "v$CAPOPS_VERSION" capops --root "$BUILD_ROOT"
  fi
}

case "${1:-}" in
  resolve) resolve ;;
  build) build ;;
  *) echo "usage: $0 resolve|build" >&2; exit 2 ;;
esac
