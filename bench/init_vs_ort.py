#!/usr/bin/python3
"""Optimization time against ONNX Runtime's session creation, per level (issue 5's figure):
fusor's load + rewrite (`fusor optimize --no-cache --json`: load_ms + optimize_ms) and its whole
session init (`fusor bench --no-cache --json`: init_ms = load + optimize + plan) against ORT's
session-init time (ort_peer.js --json: init_ms), alternated for --rounds rounds. Not part of CI.

    bench/init_vs_ort.py [--level basic] [--rounds 5] [--fusor BIN] MODEL...

MODEL as for bench/compare_ort.py (a path or a known name: resnet18, mobilenet_v2, transformer,
paddleocr_det).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_ort  # noqa: E402  (model names, shapes, ORT install)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--level", default="basic")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--fusor", default=os.path.join(compare_ort.REPO, "build", "bin", "fusor"))
    a = ap.parse_args()
    compare_ort.ensure_ort()
    peer = os.path.join(compare_ort.PEER, "ort_peer.js")
    env = dict(os.environ, ORT_PEER_DIR=compare_ort.ORT_DIR)
    for name in a.models:
        path = compare_ort.resolve(name)
        shapes = compare_ort.DEFAULT_SHAPES.get(name, ["--dim", "N=1"])
        opt, init, ort = [], [], []
        for _ in range(a.rounds):
            r = subprocess.run([a.fusor, "optimize", path, "--level", a.level, "--no-cache", "--json", "-o", os.devnull,
                                *shapes], capture_output=True, text=True, check=True)
            j = json.loads(r.stdout)
            opt.append(j["load_ms"] + j["optimize_ms"])
            r = subprocess.run([a.fusor, "bench", path, "--level", a.level, "--no-cache", "--json", "--runs", "1",
                                "--warmup", "0", "--threads", "1", *shapes], capture_output=True, text=True, check=True)
            init.append(json.loads(r.stdout)["init_ms"])
            r = subprocess.run(["node", peer, path, "--level", a.level, "--repeat", "1", "--warmup", "0", "--no-save",
                                "--json", *shapes], capture_output=True, text=True, check=True, env=env)
            ort.append(json.loads(r.stdout.strip().splitlines()[0])["init_ms"])
        m = statistics.median
        print(f"{name:14s} {a.level:8s} fusor load+optimize {m(opt):8.1f} ms (min {min(opt):7.1f}) | "
              f"fusor init {m(init):8.1f} ms (min {min(init):7.1f}) | ORT init {m(ort):8.1f} ms (min {min(ort):7.1f}) | "
              f"ratio init {m(init) / m(ort):.2f}")


if __name__ == "__main__":
    main()
