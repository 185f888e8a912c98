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
# into the repo's node_modules) and moved into the cache atomically.
#
# stdout: exactly one line, the absolute path of the binary. Everything else goes to stderr.
#
# Environment:
#   LOCAL_AI_CACHE_DIR   cache root (default: $HOME/.cache/local-ai)
#   LOCAL_AI_CLAUDE_CODE_FORCE_REINSTALL=1  ignore an existing cached install
set -euo pipefail

log() { printf '[install-claude-code] %s\n' "$*" >&2; }
die() { printf '[install-claude-code] ERROR: %s\n' "$*" >&2; exit 1; }

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VERSION="$(tr -d '[:space:]' < "${SCRIPT_DIR}/claude-code.version")"
[[ "${VERSION}" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "unexpected version '${VERSION}' in scripts/claude-code.version"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64)  PLATFORM_PKG="claude-code-linux-x64" ;;
  Linux-aarch64|Linux-arm64) PLATFORM_PKG="claude-code-linux-arm64" ;;
  Darwin-x86_64) PLATFORM_PKG="claude-code-darwin-x64" ;;
  Darwin-arm64)  PLATFORM_PKG="claude-code-darwin-arm64" ;;
  *) die "Claude Code has no build for $(uname -s) $(uname -m)" ;;
esac
# musl systems (Alpine) take the -musl build.
if [[ "$(uname -s)" == "Linux" ]] && ldd --version 2>&1 | grep -qi musl; then PLATFORM_PKG="${PLATFORM_PKG}-musl"; fi

CACHE_ROOT="${LOCAL_AI_CACHE_DIR:-${HOME}/.cache/local-ai}"
PARENT_DIR="${CACHE_ROOT}/claude-code"
DEST_DIR="${PARENT_DIR}/${VERSION}"
BIN_REL="node_modules/@anthropic-ai/${PLATFORM_PKG}/claude"
DEST_BIN="${DEST_DIR}/${BIN_REL}"

netns_available() {
  command -v unshare >/dev/null 2>&1 && unshare --net -- true >/dev/null 2>&1
}

cached_ok() { # <binary>
  [[ -x "$1" && -f "$1" ]] || return 1
  if netns_available; then
    local home
    home="$(mktemp -d)"
    local out
    out="$(HOME="${home}" unshare --net -- bash -c 'ip link set lo up 2>/dev/null; exec "$0" --version' "$1" 2>/dev/null || true)"
    rm -rf "${home}"
    [[ "${out}" == "${VERSION} (Claude Code)" ]]
  fi
}

if [[ "${LOCAL_AI_CLAUDE_CODE_FORCE_REINSTALL:-0}" != "1" ]] && cached_ok "${DEST_BIN}"; then
  log "using cached Claude Code ${VERSION}"
  printf '%s\n' "${DEST_BIN}"
  exit 0
fi

command -v npm >/dev/null 2>&1 || die "npm is required"
mkdir -p "${PARENT_DIR}"

# Serialize concurrent installs of the same version.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${PARENT_DIR}/.${VERSION}.lock"
  flock 9
  if [[ "${LOCAL_AI_CLAUDE_CODE_FORCE_REINSTALL:-0}" != "1" ]] && cached_ok "${DEST_BIN}"; then
    log "Claude Code ${VERSION} was installed by a concurrent run"
    printf '%s\n' "${DEST_BIN}"
    exit 0
  fi
fi

STAGE_DIR="$(mktemp -d "${PARENT_DIR}/.stage-${VERSION}.XXXXXX")" # same filesystem -> atomic mv
trap 'rm -rf "${STAGE_DIR}"' EXIT

log "installing @anthropic-ai/claude-code@${VERSION} into ${DEST_DIR}"
# cd away from the repo so npm cannot pick up the repo's package.json or .npmrc. No install
# scripts: the platform package already holds the executable.
(cd "${STAGE_DIR}" && npm install --prefix "${STAGE_DIR}" --no-save --no-audit --no-fund \
  --no-package-lock --ignore-scripts --engine-strict=false "@anthropic-ai/claude-code@${VERSION}" >&2) \
  || die "npm install @anthropic-ai/claude-code@${VERSION} failed"

cached_ok "${STAGE_DIR}/${BIN_REL}" \
  || die "installed package has no working binary at ${BIN_REL} (expected '${VERSION} (Claude Code)')"

chmod 0755 "${STAGE_DIR}"
if [[ -e "${DEST_DIR}" ]]; then
  OLD_DIR="${PARENT_DIR}/.old-${VERSION}.$$"
  mv "${DEST_DIR}" "${OLD_DIR}"
  mv "${STAGE_DIR}" "${DEST_DIR}"
  rm -rf "${OLD_DIR}"
else
  mv "${STAGE_DIR}" "${DEST_DIR}"
fi

log "installed Claude Code ${VERSION}"
printf '%s\n' "${DEST_BIN}"
