#!/usr/bin/python3
"""The agreement check's float comparison (bench/compare_ort.py compare_float): the absolute floor
scales with each output's range, and a real difference still fails. Runs without ORT: it writes the
two runtimes' output files itself."""
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import compare_ort as co  # noqa: E402

OPTS = {"rtol": 1e-3, "atol": 1e-5, "range_atol": 1e-6}
failures = []


def expect(what, cond):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def run(ref_arr, got_arr, opts=OPTS, name="logits"):
    ref, got = tempfile.mkdtemp(), tempfile.mkdtemp()
    np.save(os.path.join(ref, "out.%s.npy" % co.sanitize(name)), ref_arr)
    if got_arr is not None:
        np.save(os.path.join(got, "out.%s.npy" % co.sanitize(name)), got_arr)
    return co.compare_float(ref, got, [name], opts)


rng = np.random.default_rng(3)
logits = rng.normal(0, 30, (1, 1000)).astype(np.float32)
logits[0, 0] = 128.3
logits[0, 7] = -0.0068092

# resnet34's case: one near-zero logit off by 3.5e-5 in logits up to 128 (summation order).
got = logits.copy()
got[0, 7] = -0.0068447
ok, lines = run(logits, got)
expect("summation noise on a near-zero logit passes: %s" % lines, ok)
# ... but not with a fixed atol alone (the old check).
ok, _ = run(logits, got, dict(OPTS, range_atol=0.0))
expect("a fixed atol 1e-5 rejects it", not ok)

# A real error of 1e-3 on the same element fails (8x the floor of 1.28e-4).
got = logits.copy()
got[0, 7] += 1e-3
ok, _ = run(logits, got)
expect("an error of 1e-3 near zero fails", not ok)

# A relative error of 2e-3 on a large value fails.
got = logits.copy()
got[0, 0] *= 1.002
ok, _ = run(logits, got)
expect("a relative error of 2e-3 on the peak fails", not ok)

# A small-range output keeps the fixed floor: 1e-6 of 0.5 is under 1e-5.
small = rng.uniform(-0.5, 0.5, 64).astype(np.float32)
got = small.copy()
got[3] += 2e-5 + 1e-3 * abs(small[3])
ok, _ = run(small, got)
expect("a small-range output is held to atol 1e-5", not ok)
expect("float_tolerance of a small range is atol", co.float_tolerance(small, OPTS) == 1e-5)

# NaN equals NaN, an infinite value does not widen the floor, shapes and presence are checked.
nan = np.array([np.nan, 1.0, np.inf], np.float32)
ok, _ = run(nan, nan.copy())
expect("NaN and inf at the same places pass", ok)
expect("inf does not widen the floor", co.float_tolerance(nan, OPTS) == 1e-5)
ok, _ = run(logits, logits.reshape(1000, 1))
expect("a shape mismatch fails", not ok)
ok, _ = run(logits, None)
expect("a missing output fails", not ok)

# Integer outputs compare exactly.
idx = np.array([3, 1, 4], np.int64)
ok, _ = run(idx, idx.copy())
expect("equal int64 passes", ok)
ok, _ = run(idx, np.array([3, 1, 5], np.int64))
expect("different int64 fails", not ok)

# A dynamically quantized model away from ORT passes only when it is at least as close to the float
# model as ORT is, in max and in mean (ORT's AVX2 u8 x s8 kernel saturates; fusor's is exact).
def closer(ort_arr, fusor_arr, float_arr, name="hidden"):
    dirs = [tempfile.mkdtemp() for _ in range(3)]
    for d, arr in zip(dirs, (ort_arr, fusor_arr, float_arr)):
        if arr is not None:
            np.save(os.path.join(d, "out.%s.npy" % co.sanitize(name)), arr)
    return co.closer_to_float(dirs[0], dirs[1], dirs[2], [name])


flt = rng.normal(0, 1, (1, 16, 8)).astype(np.float32)
ort_far = flt + rng.normal(0, 0.04, flt.shape).astype(np.float32)
fusor_near = flt + rng.normal(0, 0.005, flt.shape).astype(np.float32)
ok, _ = closer(ort_far, fusor_near, flt)
expect("fusor closer to the float model than ORT passes", ok)
ok, _ = closer(fusor_near, ort_far, flt)
expect("fusor farther from the float model than ORT fails", not ok)
spike = fusor_near.copy()
spike[0, 0, 0] += 1.0  # close on average, one element far beyond ORT's worst
ok, _ = closer(ort_far, spike, flt)
expect("a larger max error fails even with a smaller mean", not ok)
ok, _ = closer(ort_far, fusor_near, None)
expect("a missing float-model output fails", not ok)

print("%d failure(s)" % len(failures) if failures else "all passed")
sys.exit(1 if failures else 0)
