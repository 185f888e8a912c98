#!/usr/bin/env bash
# Install a pinned Claude Code (@anthropic-ai/claude-code) for the Messages API tests and cache it
# outside the repo (its native binary is ~370 MB, far too large for a devDependency):
#
#   ${LOCAL_AI_CACHE_DIR:-$HOME/.cache/local-ai}/claude-code/<version>/node_modules/...
#
# <version> is read from scripts/claude-code.version. test/helpers/claude-code-binary.ts computes
# the same path; keep them in sync.
#
# The package's bin (bin/claude.exe) is its platform package's native executable
# @anthropic-ai/claude-code-<platform>/claude; this script prints that path, so tests run it
# without Node (the package asks for Node 22; the executable does not need Node at all).
#
# The binary is only ever run inside a loopback-only network namespace (`unshare --net`): here
# for its `--version` check, where one can be made; elsewhere the check is that the file exists
# and is an executable.
#
# Idempotent: if the cached binary passes the check, its path is printed and the script exits 0
# at once. Otherwise the package is installed with `npm install --prefix <staging dir>` (never
# into the repo's node_modules) and moved into the cache atomically (scripts/lib/cached-npm-binary.sh,
# shared with install-codex.sh).
#
# stdout: exactly one line, the absolute path of the binary. Everything else goes to stderr.
#
# Environment:
#   LOCAL_AI_CACHE_DIR   cache root (default: $HOME/.cache/local-ai)
#   LOCAL_AI_CLAUDE_CODE_FORCE_REINSTALL=1  ignore an existing cached install
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
LOG_TAG="install-claude-code"
# shellcheck source=lib/cached-npm-binary.sh
source "${SCRIPT_DIR}/lib/cached-npm-binary.sh"
read_pinned_version "${SCRIPT_DIR}/claude-code.version"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64)  PLATFORM_PKG="claude-code-linux-x64" ;;
  Linux-aarch64|Linux-arm64) PLATFORM_PKG="claude-code-linux-arm64" ;;
  Darwin-x86_64) PLATFORM_PKG="claude-code-darwin-x64" ;;
  Darwin-arm64)  PLATFORM_PKG="claude-code-darwin-arm64" ;;
  *) die "Claude Code has no build for $(uname -s) $(uname -m)" ;;
esac
# musl systems (Alpine) take the -musl build.
if [[ "$(uname -s)" == "Linux" ]] && ldd --version 2>&1 | grep -qi musl; then PLATFORM_PKG="${PLATFORM_PKG}-musl"; fi

# The version is checked inside a loopback-only namespace; without one (not root) the file is
# trusted, and the tests skip loudly anyway.
cached_ok() { # <binary>
  [[ -x "$1" && -f "$1" ]] || return 1
  local out
  out="$(version_in_netns "$1")" || return 0
  [[ "${out}" == "${VERSION} (Claude Code)" ]]
}

# No install scripts: the platform package already holds the executable.
install_cached_npm_binary "Claude Code" claude-code "@anthropic-ai/claude-code" \
  "node_modules/@anthropic-ai/${PLATFORM_PKG}/claude" \
  "${LOCAL_AI_CLAUDE_CODE_FORCE_REINSTALL:-0}" "${VERSION} (Claude Code)" \
  --ignore-scripts --engine-strict=false
