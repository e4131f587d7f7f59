#!/bin/bash
# CLI checks of providers (issue 7): an unknown provider is a usage error listing the known ones
# (exit 1); a provider definition with errors prints FILE:LINE:COL diagnostics (exit 2); a node no
# provider can run names the node, its op and the providers tried (exit 2); `optimize --json`
# reports the nodes each provider got and the Transposes inserted, cancelled and left.
#   provider_cli.sh FUSOR_BIN SOURCE_DIR WORK_DIR
set -u
fusor=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
model=/usr/share/libonnx-testdata/data/node/test_relu/model.onnx
[ -f "$model" ] || fail "missing $model"

out=$("$fusor" optimize "$model" -o "$work/o.onnx" --provider tpu,cpu --no-cache 2>&1); rc=$?
[ $rc -eq 1 ] || fail "unknown provider: exit $rc, want 1: $out"
grep -q "unknown provider 'tpu' (known: cpu, xnnpack" <<<"$out" || fail "unknown provider message: $out"

root="$work/root"
mkdir -p "$root/providers"
cp -r "$src/rules" "$root/"
cp "$src/providers/cpu.provider" "$root/providers/"
printf 'fusor-provider 1\nlayout NCWH\nkernels {\n  fusor.NhwcConv where activaton == Relu\n}\n' >"$root/providers/bad.provider"
out=$(FUSOR_RULES_DIR="$root" "$fusor" optimize "$model" -o "$work/o.onnx" --provider bad,cpu --no-cache 2>&1); rc=$?
[ $rc -eq 2 ] || fail "bad provider file: exit $rc, want 2: $out"
grep -q "bad.provider:2:8: error: unknown layout 'NCWH'" <<<"$out" || fail "bad provider diagnostics: $out"
grep -q "bad.provider:4:24: error: unknown name 'activaton'" <<<"$out" || fail "bad provider diagnostics: $out"

/usr/bin/python3 - "$work/mystery.onnx" <<'PY' || fail "cannot write the test model"
import sys, onnx
from onnx import helper, TensorProto
n = helper.make_node("Mystery", ["x"], ["y"], domain="com.example", name="odd_one")
g = helper.make_graph([n], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)]), sys.argv[1])
PY
out=$("$fusor" run "$work/mystery.onnx" --provider xnnpack,cpu --no-cache 2>&1); rc=$?
[ $rc -eq 2 ] || fail "no provider can run: exit $rc, want 2: $out"
grep -q "node 'odd_one' (com.example.Mystery): no provider can run it (tried: xnnpack, cpu)" <<<"$out" ||
  grep -q "node 'odd_one' (com.example.Mystery): no provider can run it (tried: cpu)" <<<"$out" ||
  fail "no provider message: $out"

out=$("$fusor" optimize "$model" -o "$work/o.onnx" --provider xnnpack,cpu --json --no-cache 2>/dev/null); rc=$?
[ $rc -eq 0 ] || fail "optimize --json: exit $rc"
/usr/bin/python3 -c 'import json,sys; d=json.loads(sys.argv[1]); p=d["provider_nodes"]; assert p.get("cpu") == 1, p' "$out" ||
  fail "provider_nodes: $out"
# Transposes: a Conv-Relu-Conv-Flatten model keeps one at the input and one before Flatten.
/usr/bin/python3 - "$work/cnn.onnx" <<'PY' || fail "cannot write the CNN"
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
rng = np.random.default_rng(0)
w = lambda n, s: numpy_helper.from_array(rng.uniform(-0.5, 0.5, s).astype(np.float32), n)
nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
         helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
         helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
         helper.make_node("Flatten", ["c2"], ["y"], name="flat")]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])], [w("w1", (4, 3, 3, 3)), w("w2", (4, 4, 3, 3))])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY
out=$("$fusor" optimize "$work/cnn.onnx" -o "$work/cnn.o.onnx" --provider xnnpack,cpu --json --no-cache 2>/dev/null); rc=$?
[ $rc -eq 0 ] || fail "optimize cnn: exit $rc"
/usr/bin/python3 -c '
import json, sys
t = json.loads(sys.argv[1])["transposes"]
assert (t["before"], t["inserted"], t["cancelled"], t["left"]) == (0, 4, 2, 2), t
reasons = sorted(d["reason"] for d in t["left_details"])
assert reasons[0].startswith("blocked by Flatten"), reasons
assert reasons[1].startswith("converts graph input ") and "NhwcConv" in reasons[1], reasons
' "$out" || fail "transposes: $out"
echo "ok"
