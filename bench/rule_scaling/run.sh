#!/bin/sh
# Optimizer scaling benchmarks (issue 5), outside CI:
#   rules: the same 10k-node graph optimized with 20 and with 200 synthetic rules (goal <= 3x);
#   nodes: 10k against 100k nodes with the shipped basic rules (goal <= 12x).
# Reports optimize_ms (rewrite loop only, load excluded) from `fusor optimize --json`: median and
# min of RUNS runs, alternated. usage: bench/rule_scaling/run.sh [fusor binary] [runs]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
fusor=${1:-$here/../../build/bin/fusor}
runs=${2:-5}
tmp=${TMPDIR:-/tmp}/fusor-rule-scaling
mkdir -p "$tmp"
py=/usr/bin/python3
[ -f "$tmp/m10k.onnx" ] || $py "$here/gen_model.py" 10000 "$tmp/m10k.onnx"
[ -f "$tmp/m100k.onnx" ] || $py "$here/gen_model.py" 100000 "$tmp/m100k.onnx"
$py "$here/gen_rules.py" 20 "$tmp/r20.rules"
$py "$here/gen_rules.py" 200 "$tmp/r200.rules"
"$fusor" rules check "$tmp/r200.rules" >/dev/null
$py - "$fusor" "$tmp" "$runs" <<'PY'
import json, statistics, subprocess, sys
fusor, tmp, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = {
    "20 rules, 10k nodes": [f"{tmp}/m10k.onnx", "--no-default-rules", "--rules", f"{tmp}/r20.rules"],
    "200 rules, 10k nodes": [f"{tmp}/m10k.onnx", "--no-default-rules", "--rules", f"{tmp}/r200.rules"],
    "basic, 10k nodes": [f"{tmp}/m10k.onnx"],
    "basic, 100k nodes": [f"{tmp}/m100k.onnx"],
}
times = {k: [] for k in cases}
info = {}
for _ in range(runs):
    for k, args in cases.items():
        r = subprocess.run([fusor, "optimize", *args, "--level", "basic", "--json", "-o", f"{tmp}/out.onnx"],
                           capture_output=True, text=True, check=True)
        j = json.loads(r.stdout)
        times[k].append(j["optimize_ms"])
        info[k] = (j.get("nodes_before"), j.get("nodes_after"), sum(j.get("rules_fired", {}).values()))
for k, t in times.items():
    print(f"{k:22s} optimize_ms median {statistics.median(t):8.1f} min {min(t):8.1f}  nodes/fired {info[k]}")
m = {k: statistics.median(t) for k, t in times.items()}
print(f"200/20 rules: {m['200 rules, 10k nodes'] / m['20 rules, 10k nodes']:.2f}x (goal <= 3)")
print(f"100k/10k nodes: {m['basic, 100k nodes'] / m['basic, 10k nodes']:.2f}x (goal <= 12)")
PY
