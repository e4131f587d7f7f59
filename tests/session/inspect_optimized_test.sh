#!/bin/bash
# examples/python/inspect_optimized.py on a model fusor saved, with nothing but python3-onnx:
# optimize SqueezeNet at level extended with the Conv+Relu test rule, run the script, and check
# what it prints against the facts: 83 nodes before, 57 after (26 Conv+Relu pairs fused into one
# node each), 26 fused nodes, each naming rule and originals; the model passes onnx.checker.
#   inspect_optimized_test.sh FUSOR SOURCE_DIR WORK_DIR
set -eu
fusor=$1 src=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
model=$src/examples/models/squeezenet1_1.onnx
"$fusor" optimize "$model" -o "$work/sq.opt.onnx" --level extended --no-default-rules \
  --rules "$src/tests/session/data/conv_relu.rules" >/dev/null
/usr/bin/python3 "$src/examples/python/inspect_optimized.py" "$work/sq.opt.onnx" "$model" > "$work/out.txt"
cat "$work/out.txt"
fail() { echo "FAIL: $*"; exit 1; }
grep -q "passes onnx.checker" "$work/out.txt" || fail "the saved model does not pass onnx.checker"
grep -q "opsets:    ai.onnx 13, fusor 1" "$work/out.txt" || fail "fusor opset import missing"
grep -q "optimized: by fusor .* for cpu at level extended" "$work/out.txt" || fail "metadata missing"
grep -q "fused nodes: 26$" "$work/out.txt" || fail "expected 26 fused nodes"
[ "$(grep -c 'rule test_conv_relu <- .*/Conv, .*/Relu' "$work/out.txt")" = 26 ] || fail "a fused node lacks its rule or originals"
before=$(/usr/bin/python3 -c "import onnx,sys; print(len(onnx.load(sys.argv[1]).graph.node))" "$model")
after=$(/usr/bin/python3 -c "import onnx,sys; print(len(onnx.load(sys.argv[1]).graph.node))" "$work/sq.opt.onnx")
grep -q "nodes:     $before before (original model), $after after" "$work/out.txt" || fail "node counts"
[ "$after" -lt "$before" ] || fail "no fewer nodes after"
# Without the original, 'before' is reconstructed from the provenance records alone.
/usr/bin/python3 "$src/examples/python/inspect_optimized.py" "$work/sq.opt.onnx" > "$work/out2.txt"
recon=$(( after + 26 ))  # each fused node stands for two originals
grep -q "nodes:     $recon before (reconstructed from provenance)" "$work/out2.txt" || fail "reconstructed count"
# The full checker (with python's shape inference) accepts it too.
/usr/bin/python3 -c "import onnx,sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)" "$work/sq.opt.onnx"
echo "inspect_optimized: ok"
