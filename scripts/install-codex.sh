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
# cache atomically.
#
# stdout: exactly one line, the absolute path of the binary. Everything else goes to stderr.
#
# Environment:
#   LOCAL_AI_CACHE_DIR   cache root (default: $HOME/.cache/local-ai)
#   LOCAL_AI_CODEX_FORCE_REINSTALL=1  ignore an existing cached install
set -euo pipefail

log() { printf '[install-codex] %s\n' "$*" >&2; }
die() { printf '[install-codex] ERROR: %s\n' "$*" >&2; exit 1; }

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VERSION="$(tr -d '[:space:]' < "${SCRIPT_DIR}/codex.version")"
[[ "${VERSION}" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "unexpected version '${VERSION}' in scripts/codex.version"

# Same table as @openai/codex's bin/codex.js (Linux builds are musl, statically linked).
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64)  PLATFORM_PKG="codex-linux-x64";    TRIPLE="x86_64-unknown-linux-musl" ;;
  Linux-aarch64|Linux-arm64) PLATFORM_PKG="codex-linux-arm64"; TRIPLE="aarch64-unknown-linux-musl" ;;
  Darwin-x86_64) PLATFORM_PKG="codex-darwin-x64";   TRIPLE="x86_64-apple-darwin" ;;
  Darwin-arm64)  PLATFORM_PKG="codex-darwin-arm64"; TRIPLE="aarch64-apple-darwin" ;;
  *) die "Codex CLI has no build for $(uname -s) $(uname -m)" ;;
esac

CACHE_ROOT="${LOCAL_AI_CACHE_DIR:-${HOME}/.cache/local-ai}"
PARENT_DIR="${CACHE_ROOT}/codex"
DEST_DIR="${PARENT_DIR}/${VERSION}"
BIN_REL="node_modules/@openai/${PLATFORM_PKG}/vendor/${TRIPLE}/bin/codex"
DEST_BIN="${DEST_DIR}/${BIN_REL}"

cached_ok() { # <binary>
  [[ -x "$1" ]] && [[ "$("$1" --version 2>/dev/null)" == "codex-cli ${VERSION}" ]]
}

if [[ "${LOCAL_AI_CODEX_FORCE_REINSTALL:-0}" != "1" ]] && cached_ok "${DEST_BIN}"; then
  log "using cached Codex CLI ${VERSION}"
  printf '%s\n' "${DEST_BIN}"
  exit 0
fi

command -v npm >/dev/null 2>&1 || die "npm is required"
mkdir -p "${PARENT_DIR}"

# Serialize concurrent installs of the same version.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${PARENT_DIR}/.${VERSION}.lock"
  flock 9
  if [[ "${LOCAL_AI_CODEX_FORCE_REINSTALL:-0}" != "1" ]] && cached_ok "${DEST_BIN}"; then
    log "Codex CLI ${VERSION} was installed by a concurrent run"
    printf '%s\n' "${DEST_BIN}"
    exit 0
  fi
fi

STAGE_DIR="$(mktemp -d "${PARENT_DIR}/.stage-${VERSION}.XXXXXX")" # same filesystem -> atomic mv
trap 'rm -rf "${STAGE_DIR}"' EXIT

log "installing @openai/codex@${VERSION} into ${DEST_DIR}"
# cd away from the repo so npm cannot pick up the repo's package.json or .npmrc.
(cd "${STAGE_DIR}" && npm install --prefix "${STAGE_DIR}" --no-save --no-audit --no-fund \
  --no-package-lock "@openai/codex@${VERSION}" >&2) || die "npm install @openai/codex@${VERSION} failed"

cached_ok "${STAGE_DIR}/${BIN_REL}" \
  || die "installed package has no working binary at ${BIN_REL} (expected 'codex-cli ${VERSION}')"

chmod 0755 "${STAGE_DIR}"
if [[ -e "${DEST_DIR}" ]]; then
  OLD_DIR="${PARENT_DIR}/.old-${VERSION}.$$"
  mv "${DEST_DIR}" "${OLD_DIR}"
  mv "${STAGE_DIR}" "${DEST_DIR}"
  rm -rf "${OLD_DIR}"
else
  mv "${STAGE_DIR}" "${DEST_DIR}"
fi

log "installed Codex CLI ${VERSION}"
printf '%s\n' "${DEST_BIN}"
