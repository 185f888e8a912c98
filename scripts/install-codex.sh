#!/usr/bin/env bash
# Install a pinned Codex CLI (@openai/codex) for the Responses API tests and cache it outside
# the repo (its native binaries are ~400 MB, far too large for a devDependency):
#
#   ${LOCAL_AI_CACHE_DIR:-$HOME/.cache/local-ai}/codex/<version>/node_modules/...
#
# <version> is read from scripts/codex.version. test/helpers/codex-binary.ts computes the same
# path; keep them in sync.
#
# The package's bin wrapper (bin/codex.js) only picks the platform package
# @openai/codex-<platform>-<arch> and execs vendor/<target-triple>/bin/codex from it; this script
# prints that native binary, so tests run it without a Node process in between.
#
# Idempotent: if the cached binary exists and `--version` prints the pinned version, its path is
# printed and the script exits 0 at once. Otherwise the package is installed with
# `npm install --prefix <staging dir>` (never into the repo's node_modules) and moved into the
# cache atomically (scripts/lib/cached-npm-binary.sh, shared with install-claude-code.sh).
#
# stdout: exactly one line, the absolute path of the binary. Everything else goes to stderr.
#
# Environment:
#   LOCAL_AI_CACHE_DIR   cache root (default: $HOME/.cache/local-ai)
#   LOCAL_AI_CODEX_FORCE_REINSTALL=1  ignore an existing cached install
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LOG_TAG="install-codex"
# shellcheck source=lib/cached-npm-binary.sh
source "${SCRIPT_DIR}/lib/cached-npm-binary.sh"
read_pinned_version "${SCRIPT_DIR}/codex.version"

# Same table as @openai/codex's bin/codex.js (Linux builds are musl, statically linked).
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64)  PLATFORM_PKG="codex-linux-x64";    TRIPLE="x86_64-unknown-linux-musl" ;;
  Linux-aarch64|Linux-arm64) PLATFORM_PKG="codex-linux-arm64"; TRIPLE="aarch64-unknown-linux-musl" ;;
  Darwin-x86_64) PLATFORM_PKG="codex-darwin-x64";   TRIPLE="x86_64-apple-darwin" ;;
  Darwin-arm64)  PLATFORM_PKG="codex-darwin-arm64"; TRIPLE="aarch64-apple-darwin" ;;
  *) die "Codex CLI has no build for $(uname -s) $(uname -m)" ;;
esac

# The version is checked inside a loopback-only namespace (`unshare --net`, version_in_netns in
# scripts/lib/cached-npm-binary.sh): the binary never runs with a network; without one (not root) the file is
# trusted, and the tests skip loudly anyway.
cached_ok() { # <binary>
  [[ -x "$1" && -f "$1" ]] || return 1
  local out
  out="$(version_in_netns "$1")" || return 0
  [[ "${out}" == "codex-cli ${VERSION}" ]]
}

install_cached_npm_binary "Codex CLI" codex "@openai/codex" \
  "node_modules/@openai/${PLATFORM_PKG}/vendor/${TRIPLE}/bin/codex" \
  "${LOCAL_AI_CODEX_FORCE_REINSTALL:-0}" "codex-cli ${VERSION}"
