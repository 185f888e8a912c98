#!/usr/bin/env bash
# Build a real `llama-server` binary from the llama.cpp source that ships inside
# the installed node-llama-cpp package (node_modules/node-llama-cpp/llama/gitRelease.bundle)
# and cache it outside the repo:
#
#   ${LOCAL_AI_CACHE_DIR:-$HOME/.cache/local-ai}/llama-server/<tag>/bin/llama-server
#
# <tag> is the llama.cpp release node-llama-cpp was built from
# (llama/binariesGithubRelease.json "release", falling back to llama/llama.cpp.info.json "tag").
# test/helpers/llama-server-binary.ts computes the same path; keep them in sync.
#
# Idempotent: if the cached binary exists and `--version` succeeds, its path is printed
# and the script exits 0 immediately. Otherwise the bundle is cloned into a temp dir,
# configured (CPU-only, static libs, x86-64-v3, no network, no web UI assets), only the
# `llama-server` target is built, and the result is moved into the cache atomically.
#
# stdout: exactly one line, the absolute path of the binary. Everything else goes to stderr.
#
# Environment:
#   LOCAL_AI_CACHE_DIR         cache root (default: $HOME/.cache/local-ai)
#   LLAMA_SERVER_BUILD_JOBS    parallel compile jobs (default: 2)
#   LLAMA_SERVER_FORCE_REBUILD=1  ignore an existing cached binary
set -euo pipefail

log() { printf '[build-llama-server] %s\n' "$*" >&2; }
die() { printf '[build-llama-server] ERROR: %s\n' "$*" >&2; exit 1; }

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "${SCRIPT_DIR}/.." && pwd)"
LLAMA_PKG_DIR="${REPO_ROOT}/node_modules/node-llama-cpp/llama"
BUNDLE="${LLAMA_PKG_DIR}/gitRelease.bundle"
JOBS="${LLAMA_SERVER_BUILD_JOBS:-2}"

# --- release tag (same source as test/helpers/llama-server-binary.ts) -------------------
json_string_field() { # <file> <field>
  [[ -f "$1" ]] || return 0
  sed -n "s/.*\"$2\"[[:space:]]*:[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p" "$1" | head -n 1
}

[[ -d "${LLAMA_PKG_DIR}" ]] || die "node-llama-cpp is not installed (${LLAMA_PKG_DIR} missing); run 'npm ci' first."

TAG="$(json_string_field "${LLAMA_PKG_DIR}/binariesGithubRelease.json" release)"
if [[ -z "${TAG}" ]]; then
  TAG="$(json_string_field "${LLAMA_PKG_DIR}/llama.cpp.info.json" tag)"
fi
[[ -n "${TAG}" ]] || die "could not read the llama.cpp release tag from ${LLAMA_PKG_DIR}/binariesGithubRelease.json or llama.cpp.info.json"
[[ "${TAG}" =~ ^[A-Za-z0-9._-]+$ ]] || die "unexpected llama.cpp release tag '${TAG}'"

CACHE_ROOT="${LOCAL_AI_CACHE_DIR:-${HOME}/.cache/local-ai}"
PARENT_DIR="${CACHE_ROOT}/llama-server"
DEST_DIR="${PARENT_DIR}/${TAG}"
DEST_BIN="${DEST_DIR}/bin/llama-server"

cached_ok() {
  [[ -x "${DEST_BIN}" ]] && "${DEST_BIN}" --version >/dev/null 2>&1
}

if [[ "${LLAMA_SERVER_FORCE_REBUILD:-0}" != "1" ]] && cached_ok; then
  log "using cached binary (llama.cpp ${TAG})"
  printf '%s\n' "${DEST_BIN}"
  exit 0
fi

# --- prerequisites ----------------------------------------------------------------------
[[ -f "${BUNDLE}" ]] || die "llama.cpp source bundle not found: ${BUNDLE}"
command -v git >/dev/null 2>&1 || die "git is required (apt-get install git)."
command -v cmake >/dev/null 2>&1 || die "cmake is required (apt-get install cmake, >= 3.18)."
CC_BIN="${CC:-}"
if [[ -z "${CC_BIN}" ]]; then
  for c in cc gcc clang; do command -v "$c" >/dev/null 2>&1 && { CC_BIN="$c"; break; }; done
fi
CXX_BIN="${CXX:-}"
if [[ -z "${CXX_BIN}" ]]; then
  for c in c++ g++ clang++; do command -v "$c" >/dev/null 2>&1 && { CXX_BIN="$c"; break; }; done
fi
[[ -n "${CC_BIN}" ]] && command -v "${CC_BIN}" >/dev/null 2>&1 || die "no C compiler found (apt-get install build-essential)."
[[ -n "${CXX_BIN}" ]] && command -v "${CXX_BIN}" >/dev/null 2>&1 || die "no C++ compiler found (apt-get install build-essential / g++)."
if command -v ninja >/dev/null 2>&1; then
  GENERATOR="Ninja"
elif command -v make >/dev/null 2>&1; then
  GENERATOR="Unix Makefiles"
else
  die "neither ninja nor make found (apt-get install ninja-build or make)."
fi

mkdir -p "${PARENT_DIR}"

# --- serialize concurrent builds --------------------------------------------------------
if command -v flock >/dev/null 2>&1; then
  exec 9>"${PARENT_DIR}/.${TAG}.lock"
  if ! flock -n 9; then
    log "another build of ${TAG} is running; waiting for it"
    flock 9
  fi
  if [[ "${LLAMA_SERVER_FORCE_REBUILD:-0}" != "1" ]] && cached_ok; then
    log "binary was built by a concurrent run"
    printf '%s\n' "${DEST_BIN}"
    exit 0
  fi
fi

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/llama-server-build.XXXXXX")"
STAGE_DIR="$(mktemp -d "${PARENT_DIR}/.stage-${TAG}.XXXXXX")" # same filesystem as DEST_DIR -> atomic mv
cleanup() { rm -rf "${WORK_DIR}" "${STAGE_DIR}"; }
trap cleanup EXIT

START_TS="$(date +%s)"

# --- source -----------------------------------------------------------------------------
SRC_DIR="${WORK_DIR}/llama.cpp"
log "cloning ${BUNDLE}"
git clone --quiet --no-checkout "${BUNDLE}" "${SRC_DIR}" >&2
# The bundle may contain a tag ref, a branch, or only HEAD (node-llama-cpp squashes the
# release into a single commit); prefer the tag when present.
REF="$(git -C "${SRC_DIR}" for-each-ref --format='%(refname)' "refs/tags/${TAG}" | head -n 1)"
[[ -n "${REF}" ]] || REF="HEAD"
git -C "${SRC_DIR}" -c advice.detachedHead=false checkout --quiet --detach "${REF}" >&2
COMMIT="$(git -C "${SRC_DIR}" rev-parse HEAD)"
log "llama.cpp ${TAG} at ${COMMIT} (ref ${REF})"

[[ -f "${SRC_DIR}/tools/server/CMakeLists.txt" || -f "${SRC_DIR}/examples/server/CMakeLists.txt" ]] \
  || die "this llama.cpp source has no server target (tools/server or examples/server)."

# Pass an option only if this llama.cpp version knows about it (option names move around).
has_cmake_symbol() {
  git -C "${SRC_DIR}" grep -q -w -e "$1" -- '*CMakeLists.txt' '*.cmake'
}

CMAKE_ARGS=(
  -G "${GENERATOR}"
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_C_COMPILER="${CC_BIN}"
  -DCMAKE_CXX_COMPILER="${CXX_BIN}"
  -DBUILD_SHARED_LIBS=OFF          # libllama/libggml/libmtmd linked into the executable
  -DLLAMA_BUILD_COMMON=ON          # server depends on common
  -DLLAMA_BUILD_TOOLS=ON           # the server lives under tools/ in current llama.cpp
  -DLLAMA_BUILD_SERVER=ON
  -DLLAMA_BUILD_TESTS=OFF
  -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_OPENSSL=OFF              # no HTTPS client/server needed, no libssl dependency
  -DGGML_NATIVE=OFF                # portable: do not use -march=native
  -DGGML_CUDA=OFF
  -DGGML_VULKAN=OFF
  -DGGML_METAL=OFF
  -DGGML_BLAS=OFF
  -DGGML_RPC=OFF
  -DGGML_BACKEND_DL=OFF
  -DGGML_CPU_ALL_VARIANTS=OFF
  -DGGML_CCACHE=OFF
)

case "$(uname -m)" in
  x86_64|amd64)
    # x86-64-v3 feature set (Haswell+ / Zen+): AVX, AVX2, FMA, F16C, BMI2; no AVX-512.
    CMAKE_ARGS+=(
      -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
      -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF
      -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
    )
    ;;
  *)
    log "non-x86 host ($(uname -m)): using llama.cpp's generic (non-native) CPU defaults"
    ;;
esac

# Optional, version-dependent switches.
has_cmake_symbol LLAMA_BUILD_APP        && CMAKE_ARGS+=(-DLLAMA_BUILD_APP=OFF)        # unified binary, not needed
# Web UI: an empty asset table is embedded instead of running npm or downloading dist.tar.gz
# from Hugging Face (no network here). Older llama.cpp used the *_WEBUI spellings.
if has_cmake_symbol LLAMA_BUILD_UI; then
  CMAKE_ARGS+=(-DLLAMA_BUILD_UI=OFF)
elif has_cmake_symbol LLAMA_BUILD_WEBUI; then
  CMAKE_ARGS+=(-DLLAMA_BUILD_WEBUI=OFF)
fi
if has_cmake_symbol LLAMA_USE_PREBUILT_UI; then
  CMAKE_ARGS+=(-DLLAMA_USE_PREBUILT_UI=OFF)
elif has_cmake_symbol LLAMA_USE_PREBUILT_WEBUI; then
  CMAKE_ARGS+=(-DLLAMA_USE_PREBUILT_WEBUI=OFF)
fi
has_cmake_symbol LLAMA_CURL             && CMAKE_ARGS+=(-DLLAMA_CURL=OFF)             # no libcurl
has_cmake_symbol LLAMA_BUILD_BORINGSSL  && CMAKE_ARGS+=(-DLLAMA_BUILD_BORINGSSL=OFF)  # would git-clone BoringSSL
has_cmake_symbol LLAMA_BUILD_LIBRESSL   && CMAKE_ARGS+=(-DLLAMA_BUILD_LIBRESSL=OFF)   # would download LibreSSL
has_cmake_symbol LLAMA_LLGUIDANCE       && CMAKE_ARGS+=(-DLLAMA_LLGUIDANCE=OFF)       # would git-clone + cargo
has_cmake_symbol GGML_OPENMP_FETCH      && CMAKE_ARGS+=(-DGGML_OPENMP_FETCH=OFF)      # Windows-only download
has_cmake_symbol GGML_CPU_KLEIDIAI      && CMAKE_ARGS+=(-DGGML_CPU_KLEIDIAI=OFF)      # would download KleidiAI
has_cmake_symbol GGML_BUILD_TESTS       && CMAKE_ARGS+=(-DGGML_BUILD_TESTS=OFF)
has_cmake_symbol GGML_BUILD_EXAMPLES    && CMAKE_ARGS+=(-DGGML_BUILD_EXAMPLES=OFF)

BUILD_DIR="${WORK_DIR}/build"
log "configuring (${GENERATOR}): ${CMAKE_ARGS[*]}"
cmake -S "${SRC_DIR}" -B "${BUILD_DIR}" "${CMAKE_ARGS[@]}" >&2 || die "cmake configure failed"

log "building target llama-server with ${JOBS} jobs (takes several minutes)"
cmake --build "${BUILD_DIR}" --config Release --target llama-server -j "${JOBS}" >&2 \
  || die "cmake build failed"

BUILT_BIN="$(find "${BUILD_DIR}" -type f -name llama-server -perm -u+x | head -n 1)"
[[ -n "${BUILT_BIN}" ]] || die "build finished but no llama-server executable was produced"

# --- install into the cache atomically --------------------------------------------------
mkdir -p "${STAGE_DIR}/bin"
cp "${BUILT_BIN}" "${STAGE_DIR}/bin/llama-server"
chmod 0755 "${STAGE_DIR}/bin/llama-server"
# BUILD_SHARED_LIBS=OFF should leave no project shared libs; copy any that slipped through.
while IFS= read -r lib; do
  cp -P "${lib}" "${STAGE_DIR}/bin/"
done < <(find "${BUILD_DIR}" \( -name 'libllama*.so*' -o -name 'libggml*.so*' -o -name 'libmtmd*.so*' \) 2>/dev/null)

"${STAGE_DIR}/bin/llama-server" --version >/dev/null 2>&1 \
  || die "freshly built binary does not run: ${STAGE_DIR}/bin/llama-server --version"

END_TS="$(date +%s)"
{
  echo "tag=${TAG}"
  echo "commit=${COMMIT}"
  echo "built_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "build_seconds=$((END_TS - START_TS))"
  echo "jobs=${JOBS}"
  echo "generator=${GENERATOR}"
  echo "compiler=$("${CXX_BIN}" --version | head -n 1)"
  echo "cmake_args=${CMAKE_ARGS[*]}"
} > "${STAGE_DIR}/build-info.txt"

chmod 0755 "${STAGE_DIR}"
if [[ -e "${DEST_DIR}" ]]; then
  OLD_DIR="${PARENT_DIR}/.old-${TAG}.$$"
  mv "${DEST_DIR}" "${OLD_DIR}"
  mv "${STAGE_DIR}" "${DEST_DIR}"
  rm -rf "${OLD_DIR}"
else
  mv "${STAGE_DIR}" "${DEST_DIR}"
fi

log "built llama-server for llama.cpp ${TAG} in $((END_TS - START_TS))s"
printf '%s\n' "${DEST_BIN}"
