# Shared by scripts/install-codex.sh and scripts/install-claude-code.sh (source it, do not run it):
# install a pinned npm package that carries a native binary into
#   ${LOCAL_AI_CACHE_DIR:-$HOME/.cache/local-ai}/<cache name>/<version>/node_modules/...
# and print that binary's path.
#
# The caller sets LOG_TAG before sourcing, then calls read_pinned_version and
# install_cached_npm_binary, and defines cached_ok <binary> (its own check of an install).

log() { printf '[%s] %s\n' "${LOG_TAG}" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "${LOG_TAG}" "$*" >&2; exit 1; }

# version_in_netns <binary>: its `--version` output, run inside a network namespace that has only
# loopback and with a throwaway HOME: the coding agents are never run anywhere else. Prints
# nothing and returns 1 where such a namespace cannot be made (not root).
version_in_netns() {
  command -v unshare >/dev/null 2>&1 && unshare --net -- true >/dev/null 2>&1 || return 1
  local home
  home="$(mktemp -d)"
  HOME="${home}" CODEX_HOME="${home}" unshare --net -- bash -c 'ip link set lo up 2>/dev/null; exec "$0" --version' "$1" 2>/dev/null || true
  rm -rf "${home}"
}

# read_pinned_version <version file>: sets VERSION (x.y.z) or dies.
read_pinned_version() {
  VERSION="$(tr -d '[:space:]' < "$1")"
  [[ "${VERSION}" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] \
    || die "unexpected version '${VERSION}' in scripts/$(basename "$1")"
}

# install_cached_npm_binary <label> <cache name> <package> <binary path under the install>
#   <force reinstall: 0|1> <expected --version text, for the error> [extra npm install args...]
# Idempotent: a cached binary that passes cached_ok is printed at once. Otherwise the package is
# installed with `npm install --prefix <staging dir>` (never into the repo's node_modules) and
# moved into the cache atomically. stdout: exactly one line, the binary's absolute path.
install_cached_npm_binary() {
  local label="$1" cache_name="$2" package="$3" bin_rel="$4" force="$5" expected="$6"
  shift 6
  local parent_dir="${LOCAL_AI_CACHE_DIR:-${HOME}/.cache/local-ai}/${cache_name}"
  local dest_dir="${parent_dir}/${VERSION}"
  local dest_bin="${dest_dir}/${bin_rel}"

  if [[ "${force}" != "1" ]] && cached_ok "${dest_bin}"; then
    log "using cached ${label} ${VERSION}"
    printf '%s\n' "${dest_bin}"
    return 0
  fi

  command -v npm >/dev/null 2>&1 || die "npm is required"
  mkdir -p "${parent_dir}"

  # Serialize concurrent installs of the same version.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"${parent_dir}/.${VERSION}.lock"
    flock 9
    if [[ "${force}" != "1" ]] && cached_ok "${dest_bin}"; then
      log "${label} ${VERSION} was installed by a concurrent run"
      printf '%s\n' "${dest_bin}"
      return 0
    fi
  fi

  # Global so the EXIT trap still sees it after this function returns.
  STAGE_DIR="$(mktemp -d "${parent_dir}/.stage-${VERSION}.XXXXXX")" # same filesystem -> atomic mv
  trap 'rm -rf "${STAGE_DIR}"' EXIT

  log "installing ${package}@${VERSION} into ${dest_dir}"
  # cd away from the repo so npm cannot pick up the repo's package.json or .npmrc.
  (cd "${STAGE_DIR}" && npm install --prefix "${STAGE_DIR}" --no-save --no-audit --no-fund \
    --no-package-lock "$@" "${package}@${VERSION}" >&2) || die "npm install ${package}@${VERSION} failed"

  cached_ok "${STAGE_DIR}/${bin_rel}" \
    || die "installed package has no working binary at ${bin_rel} (expected '${expected}')"

  chmod 0755 "${STAGE_DIR}"
  if [[ -e "${dest_dir}" ]]; then
    local old_dir="${parent_dir}/.old-${VERSION}.$$"
    mv "${dest_dir}" "${old_dir}"
    mv "${STAGE_DIR}" "${dest_dir}"
    rm -rf "${old_dir}"
  else
    mv "${STAGE_DIR}" "${dest_dir}"
  fi

  log "installed ${label} ${VERSION}"
  printf '%s\n' "${dest_bin}"
}
