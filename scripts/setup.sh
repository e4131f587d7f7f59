#!/usr/bin/env bash
# Installs the Debian 12 packages fusor needs (a no-op when they are present) and builds a
# Release build into build/ (CLI at build/bin/fusor).
#   scripts/setup.sh            install + build
#   scripts/setup.sh --deps     install only
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

PKGS=(cmake g++ make pkg-config git
      libonnx-dev libonnx-testdata python3-onnx python3-numpy
      libprotobuf-dev protobuf-compiler tao-pegtl-dev libfmt-dev libsqlite3-dev
      googletest libgtest-dev libgmock-dev libbenchmark-dev)

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
[ "${1:-}" = "--deps" ] && exit 0

BUILD_TYPE=${FUSOR_BUILD_TYPE:-Release}
cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" ${FUSOR_CMAKE_ARGS:-} >/dev/null
cmake --build "$here/build" -j"$(nproc)"
