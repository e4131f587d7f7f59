#!/usr/bin/env bash
# The main job on the bundled example: set up, build, then optimize SqueezeNet 1.1 and show what
# changed (node counts before and after, rules fired, op histogram).
#   scripts/demo.sh [MODEL.onnx] [fusor optimize flags...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${FUSOR_BUILD_DIR:-$here/build}
"$here/scripts/setup.sh"
echo
model=${1:-$here/examples/models/squeezenet1_1.onnx}
[ $# -gt 0 ] && shift
out=${TMPDIR:-/tmp}/fusor-demo/$(basename "${model%.onnx}").optimized.onnx
mkdir -p "$(dirname "$out")"
echo "\$ fusor inspect $model"
"$build/bin/fusor" inspect "$model"
echo
echo "\$ fusor optimize $model -o $out --level all $*"
"$build/bin/fusor" optimize "$model" -o "$out" --level all "$@"
