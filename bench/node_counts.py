#!/usr/bin/python3
"""Nodes left by fusor and by ONNX Runtime 1.30 at the same level, on the broad benchmark set.

    /usr/bin/python3 bench/node_counts.py [--levels basic,extended] [--fusor BIN] [--json] [MODEL...]

For each model (default: bench/broad.py's set) and level, fusor optimizes with `fusor optimize
--no-cache -o` and ORT saves its optimized model (`ort_peer.js --level L`, the same shape flags,
ORT runs with them as free-dimension overrides and without, and its smaller count is kept). Both files are
counted by the same tool (../shared/tools/ort-peer/onnx_stats.py): nodes without Constant nodes,
subgraph nodes included. A row where fusor leaves more nodes than ORT is marked `<-- gap` with the
ops whose counts differ; the exit code is 1 when any gap is found.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import broad  # noqa: E402  (the model set and its shapes)
import compare_ort as co  # noqa: E402

STATS = os.path.join(co.PEER, "onnx_stats.py")


def stats(path):
    r = subprocess.run(["/usr/bin/python3", STATS, "--json", path], capture_output=True, text=True)
    if r.returncode != 0:
        co.die("onnx_stats failed on %s: %s" % (path, r.stderr[-1000:]))
    d = json.loads(r.stdout)
    hist = dict(d["op_hist"])
    for k, v in d.get("subgraph_op_hist", {}).items():
        hist[k] = hist.get(k, 0) + v
    hist.pop("Constant", None)
    return d["nodes_nonconst"] + d["subgraph_nodes_nonconst"], hist


def fusor_count(fusor, path, level, dims, work):
    out = os.path.join(work, "fusor.%s.onnx" % level)
    cmd = [fusor, "optimize", path, "-o", out, "--level", level, "--no-cache"] + dims
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        co.die("fusor optimize failed (exit %d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr[-2000:]))
    return stats(out)


def ort_count(path, level, dims, work):
    """ORT's count with the shapes as free-dimension overrides and without them: the smaller one
    (ORT sometimes folds more with symbolic shapes than with static ones)."""
    best = None
    for extra in (["--free-dims"], []):
        cmd = ["node", os.path.join(co.PEER, "ort_peer.js"), path, "--level", level, "--repeat", "1", "--warmup", "0",
               "--json", "--opt-dir", work] + extra + dims
        r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, ORT_PEER_DIR=co.ORT_DIR))
        if r.returncode != 0:
            co.die("ORT failed: " + " ".join(cmd) + "\n" + r.stderr[-2000:])
        rec = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")][-1]
        got = stats(rec["opt_file"])
        if best is None or got[0] < best[0]:
            best = got
    return best


def main(argv):
    fusor = os.path.join(co.REPO, "build", "bin", "fusor")
    levels, models, as_json, i = ["basic", "extended"], [], False, 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a == "--levels": levels = argv[i + 1].split(","); i += 1
        elif a == "--fusor": fusor = argv[i + 1]; i += 1
        elif a == "--json": as_json = True
        elif a in broad.SET: models.append(a)
        else: co.die("unknown argument %s" % a)
        i += 1
    models = models or [m for m in broad.SET if m != "bert_like_s384"]  # one row per exported file
    co.ensure_ort()
    gaps = 0
    if not as_json:
        print("| model | level | ORT | fusor | |")
        print("|---|---|---|---|---|", flush=True)
    for m in models:
        path = broad.model_path(m)
        work = tempfile.mkdtemp(prefix="fusor-nodes-")
        for level in levels:
            (fn, fh), (on, oh) = fusor_count(fusor, path, level, broad.SET[m], work), \
                ort_count(path, level, broad.SET[m], work)
            diff = {k: fh.get(k, 0) - oh.get(k, 0) for k in set(fh) | set(oh) if fh.get(k, 0) != oh.get(k, 0)}
            gap = fn > on
            gaps += gap
            if as_json:
                print(json.dumps({"model": m, "level": level, "ort": on, "fusor": fn, "op_diff": diff}))
            else:
                note = ""
                if gap:
                    note = "<-- gap: " + ", ".join("%s %+d" % kv for kv in sorted(diff.items(), key=lambda kv: -kv[1]) if kv[1] > 0)
                print("| %s | %s | %d | %d | %s |" % (m, level, on, fn, note), flush=True)
    return 1 if gaps else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
