#!/usr/bin/env bash
# The installed package works without the source tree (issue 18): cmake --install into a fresh
# prefix outside the source tree, build examples/host_app against it with find_package(fusor),
# then run the installed `fusor` and host_app (which sets no rules_dir) on SqueezeNet with the
# source tree hidden: a private mount namespace binds an empty folder over it (unshare), or, where
# namespaces are not allowed, FUSOR_TEST_NO_SOURCE_TREE makes the library ignore its compiled-in
# path. Both must find PREFIX/share/fusor by themselves; FUSOR_RULES_DIR still overrides.
# host_app checks its own answers (repeat runs agree, no allocations in steady state, optimized
# output matches level disabled).
#   tests/session/install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$(cd "$2" && pwd)
work=$(mktemp -d /tmp/fusor-install-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/fusor/fusor.h include/fusor/session.h lib/cmake/fusor/fusorConfig.cmake \
         share/fusor/providers/cpu.provider bin/fusor; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
cp "$src/examples/models/squeezenet1_1.onnx" "$work/model.onnx"
cmake -S "$src/examples/host_app" -B "$work/app" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/app" -j2 >/dev/null

# Runs CMD with the source tree out of reach.
mkdir -p "$work/empty"
if unshare -rm true 2>/dev/null; then
  hidden() { unshare -rm sh -c 'mount --bind "$0" "$1" && shift && exec "$@"' "$work/empty" "$src" "$@"; }
  how="the source tree hidden by a mount namespace"
  [ -z "$(hidden ls -A "$src")" ] || fail "the source tree is still visible"
else
  hidden() { FUSOR_TEST_NO_SOURCE_TREE=1 "$@"; }
  how="FUSOR_TEST_NO_SOURCE_TREE=1 (no mount namespaces here)"
fi
echo "install_test: running with $how"

export XDG_CACHE_HOME=$work/cache
unset FUSOR_RULES_DIR
out=$(hidden "$prefix/bin/fusor" optimize "$work/model.onnx" -o "$work/cli.opt.onnx" --level all --json 2>&1) \
  || fail "installed fusor optimize: $out"
grep -q '"rules_fired"' <<<"$out" || fail "installed fusor printed no report: $out"
[ -s "$work/cli.opt.onnx" ] || fail "installed fusor wrote no model"
out=$(hidden "$prefix/bin/fusor" run "$work/model.onnx" --no-cache 2>&1) || fail "installed fusor run: $out"

out=$(hidden "$work/app/host_app" "$work/model.onnx" all "$work/app.opt.onnx" 2>&1) || fail "host_app: $out"
echo "$out"
grep -q "host_app: ok" <<<"$out" || fail "host_app did not report ok"
[ -s "$work/app.opt.onnx" ] || fail "host_app did not write the optimized model"

# FUSOR_RULES_DIR still overrides what an installed fusor finds.
if out=$(FUSOR_RULES_DIR=$work/nowhere hidden "$prefix/bin/fusor" optimize "$work/model.onnx" -o "$work/x.onnx" 2>&1); then
  fail "FUSOR_RULES_DIR=$work/nowhere was ignored: $out"
fi
grep -q "$work/nowhere/providers/cpu.provider" <<<"$out" || fail "FUSOR_RULES_DIR not used: $out"
echo "install_test: ok"
