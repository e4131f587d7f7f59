#!/usr/bin/python3
"""Session creation against ONNX Runtime's, per level, alternated for --rounds rounds. Not part of CI.

Without --cache (issue 5's figure): fusor's load + rewrite (`fusor optimize --no-cache --json`:
load_ms + optimize_ms) and its whole session init (`fusor bench --no-cache --json`: init_ms =
load + optimize + plan) against ORT's session-init time (ort_peer.js --json: init_ms).

With --cache (issue 17's figure): fusor's init on a cache miss (a fresh cache each round: load,
optimize, plan, store the session image) and on a hit (the image mapped, the plan restored), with
the hit's breakdown (key, open, map, plan) and each process's peak RSS (/usr/bin/time), against
ORT's session creation.

    bench/init_vs_ort.py [--level basic] [--rounds 5] [--cache] [--threads 1] [--fusor BIN] MODEL...

MODEL as for bench/compare_ort.py (a path or a known name: resnet18, mobilenet_v2, transformer,
paddleocr_det) or a model of the broad set (bench/broad.py --list: vit_tiny, gpt_like, ...).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_ort  # noqa: E402  (model names, shapes, ORT install)


import broad  # noqa: E402  (the broad set's names, files and shapes)


def resolve(name):
    if name in broad.SET:
        return broad.model_path(name)
    return compare_ort.resolve(name)


def timed(cmd, env=None):
    """Runs cmd under /usr/bin/time; returns (stdout, peak RSS in MB)."""
    r = subprocess.run(["/usr/bin/time", "-f", "maxrss_kb=%M", *cmd], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}")
    rss = [int(x.split("=")[1]) for x in r.stderr.splitlines() if x.startswith("maxrss_kb=")]
    return r.stdout, (rss[-1] / 1024 if rss else float("nan"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--level", default="basic")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", action="store_true", help="miss and hit through the session-image cache")
    ap.add_argument("--fusor", default=os.path.join(compare_ort.REPO, "build", "bin", "fusor"))
    a = ap.parse_args()
    compare_ort.ensure_ort()
    peer = os.path.join(compare_ort.PEER, "ort_peer.js")
    env = dict(os.environ, ORT_PEER_DIR=compare_ort.ORT_DIR)
    shapes_table = dict(broad.SET, **compare_ort.DEFAULT_SHAPES)
    m = statistics.median
    for name in a.models:
        path = resolve(name)
        shapes = shapes_table.get(name, ["--dim", "N=1"])
        bench = [a.fusor, "bench", path, "--level", a.level, "--json", "--runs", "1", "--warmup", "0",
                 "--threads", str(a.threads), *shapes]
        ort_cmd = ["node", peer, path, "--level", a.level, "--repeat", "1", "--warmup", "0", "--no-save", "--json",
                   *shapes]
        if not a.cache:
            opt, init, ort = [], [], []
            for _ in range(a.rounds):
                r = subprocess.run([a.fusor, "optimize", path, "--level", a.level, "--no-cache", "--json", "-o",
                                    os.devnull, *shapes], capture_output=True, text=True, check=True)
                j = json.loads(r.stdout)
                opt.append(j["load_ms"] + j["optimize_ms"])
                r = subprocess.run([*bench, "--no-cache"], capture_output=True, text=True, check=True)
                init.append(json.loads(r.stdout)["init_ms"])
                r = subprocess.run(ort_cmd, capture_output=True, text=True, check=True, env=env)
                ort.append(json.loads(r.stdout.strip().splitlines()[0])["init_ms"])
            print(f"{name:14s} {a.level:8s} fusor load+optimize {m(opt):8.1f} ms (min {min(opt):7.1f}) | "
                  f"fusor init {m(init):8.1f} ms (min {min(init):7.1f}) | ORT init {m(ort):8.1f} ms "
                  f"(min {min(ort):7.1f}) | ratio init {m(init) / m(ort):.2f}")
            continue
        work = tempfile.mkdtemp(prefix="fusor-init-")
        try:
            hit_db = os.path.join(work, "hit.db")
            out, _ = timed([*bench, "--cache", hit_db])  # warms the hit cache
            assert json.loads(out)["cache"] == "miss"
            miss, hit, ort, rss_miss, rss_hit, rss_ort = [], [], [], [], [], []
            parts = {k: [] for k in ("key_ms", "open_ms", "map_ms", "plan_ms")}
            for i in range(a.rounds):
                miss_db = os.path.join(work, f"miss{i}.db")
                out, rss = timed([*bench, "--cache", miss_db])
                j = json.loads(out)
                assert j["cache"] == "miss", j["cache"]
                miss.append(j["init_ms"])
                rss_miss.append(rss)
                shutil.rmtree(miss_db + ".images", ignore_errors=True)
                out, rss = timed([*bench, "--cache", hit_db])
                j = json.loads(out)
                assert j["cache"] == "hit" and j["init_breakdown"]["restored"], j
                hit.append(j["init_ms"])
                rss_hit.append(rss)
                for k in parts:
                    parts[k].append(j["init_breakdown"][k])
                out, rss = timed(ort_cmd, env=env)
                ort.append(json.loads(out.strip().splitlines()[0])["init_ms"])
                rss_ort.append(rss)
            brk = ", ".join(f"{k[:-3]} {m(v):.1f}" for k, v in parts.items())
            print(f"{name:14s} {a.level:6s} {a.threads}t | hit {m(hit):7.1f} ms (min {min(hit):6.1f}; {brk}) | "
                  f"miss {m(miss):8.1f} ms | ORT {m(ort):8.1f} ms | hit/miss {m(hit) / m(miss):.3f} | "
                  f"ORT/hit {m(ort) / m(hit):5.1f}x | peak RSS MB: hit {m(rss_hit):.0f}, miss {m(rss_miss):.0f}, "
                  f"ORT {m(rss_ort):.0f}")
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
