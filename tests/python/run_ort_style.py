#!/usr/bin/python3
"""CI driver of examples/python/ort_style_optimize.py: runs it as a user would (PYTHONPATH set by
ctest), then checks what it printed against the models themselves: the original node count is
onnx's, the optimized one is smaller and equals the saved file's.

    run_ort_style.py REPO MODEL WORKDIR
"""
import os
import re
import subprocess
import sys

import onnx


def main(repo, model, work):
    os.makedirs(work, exist_ok=True)
    out_path = os.path.join(work, "optimized.onnx")
    if os.path.exists(out_path):
        os.remove(out_path)
    script = os.path.join(repo, "examples", "python", "ort_style_optimize.py")
    p = subprocess.run([sys.executable, script, model, out_path], capture_output=True, text=True, cwd=work)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        return "the example exited with %d" % p.returncode
    counts = dict(re.findall(r"^(original|optimized) model nodes: (\d+)$", p.stdout, re.M))
    if set(counts) != {"original", "optimized"}:
        return "the node counts were not printed"
    before, after = int(counts["original"]), int(counts["optimized"])
    if before != len(onnx.load(model).graph.node):
        return "printed original count %d is not onnx's %d" % (before, len(onnx.load(model).graph.node))
    saved = onnx.load(out_path)
    if after != len(saved.graph.node):
        return "printed optimized count %d is not the saved model's %d" % (after, len(saved.graph.node))
    if not after < before:
        return "the optimized model is not smaller: %d -> %d nodes" % (before, after)
    if not re.search(r"^input: \S+ \[", p.stdout, re.M):
        return "the inputs were not printed"
    print("ok: %d -> %d nodes" % (before, after))
    return None


if __name__ == "__main__":
    problem = main(*sys.argv[1:4])
    if problem:
        print("FAIL: " + problem, file=sys.stderr)
        sys.exit(1)
