#!/usr/bin/env bash
# Installs the Debian 12 packages fusor needs (a no-op when they are present) and builds a
# Release build into build/ (CLI at build/bin/fusor). Works as root on a bare Debian 12, or with
# sudo.
#   scripts/setup.sh            install + build
#   scripts/setup.sh --deps     install only
#   scripts/setup.sh --torch    also install Debian's torch/torchvision (only for
#                               scripts/make_test_models.py and examples/export_example.py)
# Environment: FUSOR_BUILD_DIR (default build), FUSOR_BUILD_TYPE (default Release),
# FUSOR_CMAKE_ARGS (extra cmake arguments), FUSOR_JOBS (default: number of cores).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

PKGS=(cmake g++ make pkg-config git time ccache
      libonnx-dev libonnx-testdata python3 python3-onnx python3-numpy
      libprotobuf-dev protobuf-compiler tao-pegtl-dev libfmt-dev libsqlite3-dev
      libflatbuffers-dev flatbuffers-compiler libxxhash-dev  # the session image (cache/image_*.h)
      googletest libgtest-dev libgmock-dev libbenchmark-dev
      pybind11-dev python3-dev   # the fusor Python package (python/, docs/python.md)
      libxnnpack-dev libpthreadpool-dev  # the xnnpack provider (providers/xnnpack.provider)
      libxxhash-dev libflatbuffers-dev flatbuffers-compiler  # the session image of the cache
      clang-14 libclang-rt-14-dev)  # the sanitizer build and the libFuzzer targets
deps_only=0
for arg in "$@"; do
  case "$arg" in
    --deps) deps_only=1 ;;
    --torch) PKGS+=(python3-torch python3-torchvision) ;;
    *) echo "setup.sh: unknown argument '$arg' (known: --deps, --torch)" >&2; exit 1 ;;
  esac
done

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
  $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "$deps_only" = 1 ] && exit 0

build=${FUSOR_BUILD_DIR:-$here/build}
BUILD_TYPE=${FUSOR_BUILD_TYPE:-Release}
# ccache keeps rebuilds of a fresh clone on the same machine (CI's warm runs) within minutes.
# CCACHE_BASEDIR/NOHASHDIR: hits across clones in different folders (CI clones anew each run).
export CCACHE_BASEDIR="$here" CCACHE_NOHASHDIR=true
launcher=""; command -v ccache >/dev/null && launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" $launcher ${FUSOR_CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"${FUSOR_JOBS:-$(nproc)}"
