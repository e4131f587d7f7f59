#!/usr/bin/python3
"""The fusor Python package against its documented behaviour (docs/python.md).

Run by ctest (tests/CMakeLists.d/python.cmake) with PYTHONPATH at the built package and FUSOR_BIN
at the CLI; by hand:
    FUSOR_BIN=build/bin/fusor PYTHONPATH=build/python /usr/bin/python3 -m unittest tests/python/test_api.py
References: the CLI (`fusor run` on the same inputs) and ONNX's backend test data (outputs
computed by ONNX's reference, not by fusor).
"""
import glob
import json
import os
import subprocess
import tempfile
import threading
import time
import unittest

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

import fusor
import fusor as ort

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SQUEEZENET = os.path.join(REPO, "examples", "models", "squeezenet1_1.onnx")
NODE_DATA = "/usr/share/libonnx-testdata/data/node"
FUSOR_BIN = os.environ.get("FUSOR_BIN", os.path.join(REPO, "build", "bin", "fusor"))


def image(seed=0):
    return np.random.default_rng(seed).random((1, 3, 224, 224), dtype=np.float32)


def options(level=ort.GraphOptimizationLevel.ORT_ENABLE_ALL, threads=1):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = threads
    return so


def add_model_bytes():
    """y = a + b over float[N, 4] (N symbolic)."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 4])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"], name="add")], "tiny_add", [a, b], [y])
    m = helper.make_model(g, producer_name="fusor-test", opset_imports=[helper.make_opsetid("", 17)])
    m.model_version = 7
    m.doc_string = "a tiny model"
    helper.set_model_props(m, {"author": "tests"})
    return m.SerializeToString()


class Outputs(unittest.TestCase):
    def test_same_outputs_as_the_cli_run(self):
        x = image(3)
        sess = ort.InferenceSession(SQUEEZENET, options(), providers=["CPUExecutionProvider"])
        (got,) = sess.run(None, {"input": x})
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "x.npy"), x)
            subprocess.run([FUSOR_BIN, "run", SQUEEZENET, "--input", "input=" + os.path.join(d, "x.npy"),
                            "--threads", "1", "--level", "all", "--output-dir", d, "--output-format", "npy"],
                           check=True, capture_output=True)
            want = np.load(os.path.join(d, "out.logits.npy"))
        self.assertEqual(got.shape, want.shape)
        self.assertEqual(got.dtype, np.float32)
        np.testing.assert_array_equal(got, want)

    def test_onnx_backend_test_data(self):
        """Node tests: ONNX's reference outputs, through run() at every level."""
        names = ["test_add", "test_relu", "test_matmul_2d", "test_conv_with_strides_padding", "test_softmax_axis_1"]
        for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
            for name in names:
                d = os.path.join(NODE_DATA, name)
                if not os.path.isdir(d):
                    self.fail("missing test data " + d)
                with self.subTest(name=name, level=level):
                    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), options(level))
                    case = os.path.join(d, "test_data_set_0")
                    ins = [numpy_helper.to_array(onnx.load_tensor(p)) for p in sorted(glob.glob(case + "/input_*.pb"))]
                    outs = [numpy_helper.to_array(onnx.load_tensor(p)) for p in sorted(glob.glob(case + "/output_*.pb"))]
                    feed = {i.name: v for i, v in zip(sess.get_inputs(), ins)}
                    got = sess.run(None, feed)
                    self.assertEqual(len(got), len(outs))
                    for g, w in zip(got, outs):
                        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)

    def test_named_outputs_and_bytes_model(self):
        sess = ort.InferenceSession(add_model_bytes())
        a = np.arange(8, dtype=np.float32).reshape(2, 4)
        b = np.full((2, 4), 0.5, dtype=np.float32)
        for names in (None, [], ["y"]):
            (y,) = sess.run(names, {"a": a, "b": b})
            np.testing.assert_array_equal(y, a + b)

    def test_strided_and_big_endian_inputs_are_converted(self):
        sess = ort.InferenceSession(add_model_bytes())
        base = np.arange(16, dtype=np.float32).reshape(4, 4)
        strided = base[::2]                      # not C-contiguous
        big = base[:2].astype(">f4")             # not native byte order
        (y,) = sess.run(None, {"a": strided, "b": big})
        np.testing.assert_array_equal(y, base[::2] + base[:2])
        (y,) = sess.run(None, {"a": np.float32(2) * np.ones((2, 4), np.float32), "b": base[:2]})
        np.testing.assert_array_equal(y, base[:2] + 2)
        # A list is converted as numpy.asarray converts it (float64 here): rejected, as ORT does.
        with self.assertRaisesRegex(ort.InvalidArgument, "got tensor\\(double\\)"):
            sess.run(None, {"a": base[:2].tolist(), "b": base[:2]})

    def test_int64_and_bool_tensors(self):
        x = helper.make_tensor_value_info("x", TensorProto.INT64, [2, 3])
        outs = [helper.make_tensor_value_info("gt", TensorProto.BOOL, [2, 3]),
                helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
                helper.make_tensor_value_info("neg", TensorProto.INT64, [2, 3])]
        zero = numpy_helper.from_array(np.array(2, dtype=np.int64), "two")
        g = helper.make_graph([helper.make_node("Greater", ["x", "two"], ["gt"]),
                               helper.make_node("Shape", ["x"], ["shape"]),
                               helper.make_node("Neg", ["x"], ["neg"])], "ints", [x], outs, [zero])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        sess = ort.InferenceSession(m.SerializeToString())
        v = np.array([[1, 2, 3], [4, -5, 6]], dtype=np.int64)
        gt, shape, neg = sess.run(None, {"x": v})
        self.assertEqual(gt.dtype, np.bool_)
        np.testing.assert_array_equal(gt, v > 2)
        self.assertEqual(shape.dtype, np.int64)
        np.testing.assert_array_equal(shape, [2, 3])
        np.testing.assert_array_equal(neg, -v)

    def test_outputs_outlive_the_session_and_are_not_copies(self):
        sess = ort.InferenceSession(add_model_bytes())
        a = np.ones((3, 4), dtype=np.float32)
        (y,) = sess.run(None, {"a": a, "b": a})
        self.assertFalse(y.flags["OWNDATA"])  # numpy views the session's output buffer
        self.assertTrue(y.flags["WRITEABLE"])
        del sess
        np.testing.assert_array_equal(y, 2 * a)
        y += 1
        np.testing.assert_array_equal(y, 3 * a)

    def test_gil_is_released_during_run(self):
        """While one thread is inside run(), another keeps executing Python. With the GIL held,
        the other thread could only run before the call enters C++ (at most one 5 ms switch
        interval) or after it returns, never in the middle of a long run. A batch of 16 images
        makes the run long (tens of ms) so that the middle half of it is far wider than the
        switch interval and than a time slice of a loaded machine."""
        sess = ort.InferenceSession(SQUEEZENET, options())
        x = np.concatenate([image(seed) for seed in range(16)])
        sess.run(None, {"input": x})
        window, ticks, done = [], [], threading.Event()

        def runner():
            t0 = time.perf_counter()
            sess.run(None, {"input": x})
            window.extend([t0, time.perf_counter()])
            done.set()

        t = threading.Thread(target=runner)
        t.start()
        while not done.is_set():
            ticks.append(time.perf_counter())
        t.join()
        t0, t1 = window
        if t1 - t0 < 0.015:
            self.skipTest("run too short (%.1f ms) to tell" % ((t1 - t0) * 1e3))
        lo, hi = t0 + 0.25 * (t1 - t0), t0 + 0.75 * (t1 - t0)
        self.assertTrue(any(lo <= v <= hi for v in ticks), "no Python ran in the middle of run()")

    def test_concurrent_runs(self):
        sess = ort.InferenceSession(add_model_bytes())
        results, errors = {}, []

        def work(k):
            try:
                a = np.full((64, 4), k, dtype=np.float32)
                for _ in range(50):
                    (y,) = sess.run(None, {"a": a, "b": a})
                    if not np.all(y == 2 * k):
                        errors.append("thread %d got a wrong result" % k)
                results[k] = True
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(repr(e))

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 4)


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sess = ort.InferenceSession(SQUEEZENET, options(), providers=["CPUExecutionProvider"])

    def cli_error(self, x):
        with tempfile.TemporaryDirectory() as d:
            np.save(os.path.join(d, "x.npy"), x)
            p = subprocess.run([FUSOR_BIN, "run", SQUEEZENET, "--input", "input=" + os.path.join(d, "x.npy")],
                               capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        return p.stderr

    def test_wrong_input_name(self):
        with self.assertRaises(ort.InvalidArgument) as c:
            self.sess.run(None, {"image": image()})
        self.assertIn("the model has no input 'image' (its inputs: input)", str(c.exception))

    def test_missing_input(self):
        with self.assertRaisesRegex(ort.InvalidArgument, "missing input 'input'"):
            self.sess.run(None, {})

    def test_wrong_dtype_carries_the_cli_message(self):
        x = image().astype(np.float64)
        with self.assertRaises(ort.InvalidArgument) as c:
            self.sess.run(None, {"input": x})
        msg = str(c.exception)
        self.assertIn("input 'input': expected tensor(float)", msg)
        self.assertIn("got tensor(double)", msg)
        self.assertIn(msg.split("; got float64")[0], self.cli_error(x))

    def test_wrong_shape_carries_the_cli_message(self):
        x = np.zeros((1, 2, 224, 224), dtype=np.float32)
        with self.assertRaises(ort.InvalidArgument) as c:
            self.sess.run(None, {"input": x})
        self.assertIn("dimension 1 is 2", str(c.exception))
        self.assertIn(str(c.exception), self.cli_error(x))
        with self.assertRaisesRegex(ort.InvalidArgument, "expected rank 4"):
            self.sess.run(None, {"input": np.zeros((3, 224, 224), dtype=np.float32)})

    def test_a_list_input_says_why_it_is_float64(self):
        # Issue 18: a Python list becomes float64; the message (the CLI's) says so and how to convert.
        with self.assertRaises(ort.InvalidArgument) as c:
            self.sess.run(None, {"input": image().tolist()})
        msg = str(c.exception)
        self.assertIn("input 'input': expected tensor(float)", msg)
        self.assertIn("got float64 (a Python list of floats becomes float64); the model expects float32", msg)
        with self.assertRaises(ort.InvalidArgument) as c:
            self.sess.run(None, {"input": image().astype(np.float64)})
        self.assertIn("got float64 (a float64 array); the model expects float32", str(c.exception))

    def test_unsupported_dtype_and_unknown_output(self):
        with self.assertRaisesRegex(ort.InvalidArgument, "input 'input': numpy dtype .* is not supported"):
            self.sess.run(None, {"input": np.zeros((1, 3, 224, 224), dtype=np.complex64)})
        with self.assertRaisesRegex(ort.InvalidArgument, "no output 'probs'"):
            self.sess.run(["probs"], {"input": image()})
        with self.assertRaises(ort.InvalidArgument):
            self.sess.run(None, [image()])

    def test_creation_errors(self):
        with self.assertRaises(ort.NoSuchFile) as c:
            ort.InferenceSession("/no/such/model.onnx")
        self.assertIn("/no/such/model.onnx", str(c.exception))
        cli = subprocess.run([FUSOR_BIN, "run", "/no/such/model.onnx"], capture_output=True, text=True)
        self.assertEqual(cli.returncode, 2)
        self.assertIn(str(c.exception), cli.stderr)
        with self.assertRaises(ort.InvalidGraph):
            ort.InferenceSession(b"this is not a model")
        with tempfile.NamedTemporaryFile(suffix=".onnx") as f:
            f.write(b"\x08\x07garbage" * 10)
            f.flush()
            with self.assertRaises(ort.InvalidGraph) as c:
                ort.InferenceSession(f.name)
            self.assertIn(f.name, str(c.exception))
        so = ort.SessionOptions()
        so.add_session_config_entry("optimization.disable_specified_optimizers", "no_such_rule")
        with self.assertRaisesRegex(ort.InvalidArgument, "no_such_rule"):
            ort.InferenceSession(SQUEEZENET, so)
        with self.assertRaises(ort.InvalidArgument):
            ort.SessionOptions().intra_op_num_threads = -1

    def test_a_rule_file_error_carries_its_diagnostics(self):
        # Issue 18: a notebook shows no stderr, so the exception text holds FILE:LINE:COL and
        # the caret line, not "see above".
        with tempfile.NamedTemporaryFile("w", suffix=".rules") as f:
            f.write("fusor-rules 1\n\nrule broken\n  match { y = NoSuchOp(x) }\n  rewrite { y = x }\n")
            f.flush()
            so = ort.SessionOptions()
            so.add_session_config_entry("fusor.rule_files", f.name)
            with self.assertRaises(ort.InvalidGraph) as c:
                ort.InferenceSession(SQUEEZENET, so)
            text = str(c.exception)
            self.assertIn("%s:4:15: error: unknown op 'NoSuchOp'" % f.name, text)
            self.assertIn("  match { y = NoSuchOp(x) }\n              ^", text)
            self.assertNotIn("see above", text)
        so = ort.SessionOptions()
        so.add_session_config_entry("fusor.rule_files", "/no/such/file.rules")
        with self.assertRaisesRegex(ort.InvalidGraph, "cannot open rules file '/no/such/file.rules'"):
            ort.InferenceSession(SQUEEZENET, so)

    def test_exception_classes_are_ort_shaped(self):
        for cls in (ort.Fail, ort.InvalidArgument, ort.NoSuchFile, ort.InvalidGraph):
            self.assertTrue(issubclass(cls, ort.FusorError))
            self.assertTrue(issubclass(cls, Exception))
        from fusor.capi.onnxruntime_pybind11_state import InvalidArgument
        self.assertIs(InvalidArgument, ort.InvalidArgument)


class Cancellation(unittest.TestCase):
    def endless_loop(self):
        # y = Loop(M = 10^12, cond = true) { v + 1 }: would run for days.
        body = helper.make_graph(
            [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array([1.0], np.float32))),
             helper.make_node("Add", ["v_in", "one"], ["v_out"])],
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])])
        g = helper.make_graph(
            [helper.make_node("Loop", ["M", "cond", "x"], ["y"], name="forever", body=body)], "loop",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
            [numpy_helper.from_array(np.array(10**12, np.int64), "M"), numpy_helper.from_array(np.array(True), "cond")])
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()

    def test_terminate_from_another_thread(self):
        sess = ort.InferenceSession(self.endless_loop(), options(ort.GraphOptimizationLevel.ORT_DISABLE_ALL))
        ro = ort.RunOptions()
        self.assertFalse(ro.terminate)
        timer = threading.Timer(0.3, lambda: setattr(ro, "terminate", True))
        timer.start()
        start = time.time()
        with self.assertRaises(ort.Cancelled) as c:
            sess.run(None, {"x": np.zeros(1, np.float32)}, ro)
        timer.join()
        self.assertLess(time.time() - start, 30)
        self.assertTrue(issubclass(ort.Cancelled, ort.Fail))  # as ORT reports a terminated run
        self.assertIn("terminate flag", str(c.exception))
        self.assertIn("forever", str(c.exception))
        timed = ort.RunOptions()
        timed.timeout_ms = 200
        with self.assertRaisesRegex(ort.Cancelled, "timeout of 200 ms"):
            sess.run(None, {"x": np.zeros(1, np.float32)}, run_options=timed)
        with self.assertRaises(ort.InvalidArgument):
            sess.run(None, {"x": np.zeros(1, np.float32)}, run_options="stop")


class Providers(unittest.TestCase):
    def test_names(self):
        self.assertIn("CPUExecutionProvider", ort.get_available_providers())
        for given in (["CPUExecutionProvider"], ["cpu"], [("CPUExecutionProvider", {})], None):
            sess = ort.InferenceSession(add_model_bytes(), providers=given)
            self.assertEqual(sess.get_providers(), ["CPUExecutionProvider"])

    def test_unknown_provider_lists_the_known_ones(self):
        with self.assertRaises(ort.InvalidArgument) as c:
            ort.InferenceSession(add_model_bytes(), providers=["CUDAExecutionProvider"])
        self.assertIn("unknown provider 'CUDAExecutionProvider'", str(c.exception))
        self.assertIn("CPUExecutionProvider (cpu)", str(c.exception))

    def test_an_unavailable_provider_falls_back_with_a_warning(self):
        # Issue 18: the line most ORT scripts carry. As ORT: a warning, the next available one used.
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            sess = ort.InferenceSession(add_model_bytes(), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        self.assertEqual(sess.get_providers(), ["CPUExecutionProvider"])
        msgs = [str(x.message) for x in w if issubclass(x.category, UserWarning)]
        self.assertTrue(any("CUDAExecutionProvider" in m and "using CPUExecutionProvider" in m for m in msgs), msgs)
        self.assertEqual(w[0].filename, __file__)  # attributed to the caller's line
        x = np.ones((2, 4), dtype=np.float32)
        self.assertEqual(sess.run(None, {"a": x, "b": x})[0].tolist(), (2 * x).tolist())
        # Unknown names alone (nothing available left) still fail.
        with self.assertRaises(ort.InvalidArgument):
            ort.InferenceSession(add_model_bytes(), providers=["CUDAExecutionProvider", "TensorrtExecutionProvider"])

    def test_xnnpack_mapped_when_present(self):
        have = "xnnpack" in fusor._fusor.fusor_providers()
        if have:
            sess = ort.InferenceSession(add_model_bytes(), providers=["XnnpackExecutionProvider", "CPUExecutionProvider"])
            self.assertEqual(sess.get_providers()[0], "XnnpackExecutionProvider")
            self.assertIn("XnnpackExecutionProvider", ort.get_available_providers())
        else:
            with self.assertRaisesRegex(ort.InvalidArgument, "not available in this build"):
                ort.InferenceSession(add_model_bytes(), providers=["XnnpackExecutionProvider"])


class Metadata(unittest.TestCase):
    def test_inputs_outputs_and_meta(self):
        sess = ort.InferenceSession(add_model_bytes())
        ins, outs = sess.get_inputs(), sess.get_outputs()
        self.assertEqual([(i.name, i.shape, i.type) for i in ins],
                         [("a", ["N", 4], "tensor(float)"), ("b", ["N", 4], "tensor(float)")])
        self.assertEqual([(o.name, o.shape, o.type) for o in outs], [("y", ["N", 4], "tensor(float)")])
        meta = sess.get_modelmeta()
        self.assertEqual(meta.producer_name, "fusor-test")
        self.assertEqual(meta.graph_name, "tiny_add")
        self.assertEqual(meta.description, "a tiny model")
        self.assertEqual(meta.version, 7)
        self.assertEqual(meta.custom_metadata_map.get("author"), "tests")

    def test_free_dimension_override(self):
        so = ort.SessionOptions()
        so.add_free_dimension_override_by_name("N", 1)
        sess = ort.InferenceSession(SQUEEZENET, so)
        self.assertEqual(sess.get_inputs()[0].shape, [1, 3, 224, 224])
        self.assertEqual(sess.get_outputs()[0].shape, [1, 1000])

    def test_optimized_model_file_and_stamp(self):
        with tempfile.TemporaryDirectory() as d:
            so = options()
            so.optimized_model_filepath = os.path.join(d, "opt.onnx")
            sess = ort.InferenceSession(SQUEEZENET, so)
            saved = onnx.load(so.optimized_model_filepath)
            self.assertLess(len(saved.graph.node), len(onnx.load(SQUEEZENET).graph.node))
            self.assertEqual(sess.get_modelmeta().custom_metadata_map["fusor.level"], "all")
            self.assertEqual(sess.get_session_options().optimized_model_filepath, so.optimized_model_filepath)
            self.assertEqual(sess.get_session_options().graph_optimization_level,
                             ort.GraphOptimizationLevel.ORT_ENABLE_ALL)


class Profiling(unittest.TestCase):
    def test_chrome_trace_of_every_run(self):
        with tempfile.TemporaryDirectory() as d:
            so = options()
            so.enable_profiling = True
            so.profile_file_prefix = os.path.join(d, "prof")
            sess = ort.InferenceSession(SQUEEZENET, so)
            for _ in range(2):
                sess.run(None, {"input": image()})
            path = sess.end_profiling()
            self.assertTrue(path.startswith(so.profile_file_prefix) and path.endswith(".json"), path)
            with open(path) as f:
                events = json.load(f)
            runs = [e for e in events if e["cat"] == "Session"]
            nodes = [e for e in events if e["cat"] == "Node"]
            self.assertEqual(len(runs), 2)
            self.assertEqual(len(nodes) % 2, 0)
            per_run = len(nodes) // 2
            self.assertEqual(per_run, sess.optimization_report()["nodes_after"])
            for e in events:
                self.assertEqual(e["ph"], "X")
                self.assertGreaterEqual(e["dur"], 0)
            ops = {e["args"]["op_name"] for e in nodes}
            self.assertIn("fusor.NchwcConv", ops)  # the cpu provider runs convs blocked (rules/nchwc)
            for r in runs:  # every node of a run lies inside the run
                inside = [e for e in nodes if e["args"]["run"] == r["args"]["run"]]
                self.assertEqual(len(inside), per_run)
                for e in inside:
                    self.assertGreaterEqual(e["ts"], r["ts"] - 1)
                    self.assertLessEqual(e["ts"] + e["dur"], r["ts"] + r["dur"] + 1)
            # A second end_profiling covers only the runs since the first.
            sess.run(None, {"input": image()})
            with open(sess.end_profiling()) as f:
                self.assertEqual(len([e for e in json.load(f) if e["cat"] == "Session"]), 1)

    def test_off_by_default(self):
        sess = ort.InferenceSession(add_model_bytes())
        self.assertEqual(sess.end_profiling(), "")

    def test_one_profile_format_for_python_and_bench(self):
        # Issue 18: end_profiling() and `fusor bench --profile` write the same layout (ORT's).
        with tempfile.TemporaryDirectory() as d:
            so = options()
            so.enable_profiling = True
            so.profile_file_prefix = os.path.join(d, "prof")
            sess = ort.InferenceSession(SQUEEZENET, so)
            sess.run(None, {"input": image()})
            with open(sess.end_profiling()) as f:
                py = json.load(f)
            trace = os.path.join(d, "bench.json")
            subprocess.run([FUSOR_BIN, "bench", SQUEEZENET, "--runs", "1", "--warmup", "0", "--threads", "1",
                            "--no-cache", "--profile", trace], check=True, capture_output=True)
            with open(trace) as f:
                cli = json.load(f)
        self.assertIsInstance(py, list)
        self.assertIsInstance(cli, list)
        for cat in ("Session", "Node"):
            pe = next(e for e in py if e["cat"] == cat)
            ce = next(e for e in cli if e["cat"] == cat)
            self.assertEqual(sorted(pe), sorted(ce), cat)
            self.assertEqual(sorted(pe["args"]), sorted(ce["args"]), cat)
        self.assertEqual(sorted(e["name"] for e in py if e["cat"] == "Node"),
                         sorted(e["name"] for e in cli if e["cat"] == "Node"))


class Extras(unittest.TestCase):
    def test_optimization_report(self):
        sess = ort.InferenceSession(SQUEEZENET, options())
        r = sess.optimization_report()
        self.assertEqual(r["level"], "all")
        self.assertEqual(r["providers"], ["cpu"])
        self.assertGreater(r["rules_fired"].get("conv_activation", 0), 0)
        self.assertLess(r["nodes_after"], r["nodes_before"])
        self.assertEqual(r["nodes_before"], len(onnx.load(SQUEEZENET).graph.node))
        self.assertIn(r["cache"], ("hit", "miss", "off"))
        off = ort.InferenceSession(SQUEEZENET, options(ort.GraphOptimizationLevel.ORT_DISABLE_ALL))
        r0 = off.optimization_report()
        self.assertEqual(r0["rules_fired"], {})
        self.assertEqual(r0["nodes_after"], r0["nodes_before"])

    def test_disable_specified_optimizers(self):
        for key in ("session.disable_specified_optimizers", "optimization.disable_specified_optimizers"):
            so = options()
            so.add_session_config_entry(key, "conv_activation;constant_folding")
            self.assertEqual(so.get_session_config_entry(key), "conv_activation;constant_folding")
            r = ort.InferenceSession(SQUEEZENET, so).optimization_report()
            self.assertNotIn("conv_activation", r["rules_fired"])
            self.assertNotIn("constant_folding", r["rules_fired"])
            full = ort.InferenceSession(SQUEEZENET, options()).optimization_report()
            self.assertGreater(r["nodes_after"], full["nodes_after"])

    def test_arena_stats(self):
        sess = ort.InferenceSession(SQUEEZENET, options())
        for _ in range(3):  # N is symbolic: the plan is sized by the first run
            sess.run(None, {"input": image()})
        a = sess.arena_stats()
        self.assertGreater(a["arena_bytes"], 0)
        self.assertLessEqual(a["arena_bytes"], a["naive_bytes"])
        self.assertGreater(a["intermediates"], 0)
        self.assertEqual(a["last_run_fallbacks"], 0)
        self.assertEqual(sess.timing()["runs"], 3)

    def test_rules_check(self):
        files = sorted(glob.glob(os.path.join(REPO, "rules", "basic", "*.rules")))
        r = fusor.rules.check(files)
        self.assertGreater(r["rules"], 0)
        self.assertEqual(r["files"], len(files))
        with tempfile.NamedTemporaryFile("w", suffix=".rules") as f:
            f.write("rule broken\n  match { y = NoSuchOp(x) }\n  rewrite { y = x }\n")
            f.flush()
            with self.assertRaises(ort.InvalidGraph) as c:
                fusor.rules.check(f.name)
            self.assertIn(f.name, str(c.exception))
            self.assertIn("error(s) in rule files", str(c.exception))

    @unittest.skipUnless(fusor.rules.HAVE_TEST, "this build has no engine/ruletest")
    def test_rules_test(self):
        ex = os.path.join(REPO, "examples", "custom_fusion")
        r = fusor.rules.test(os.path.join(ex, "hard_sigmoid.rules"))
        self.assertTrue(r["ok"], r)
        self.assertGreaterEqual(r["tests_passed"], 2)
        self.assertEqual(r["tests_failed"], 0)
        self.assertEqual({t["outcome"] for t in r["tests"]}, {"pass"})
        r = fusor.rules.test(os.path.join(ex, "hard_sigmoid.rules"), models=[SQUEEZENET])
        self.assertEqual(len(r["models"]), 1)
        self.assertTrue(r["models"][0]["passed"], r["models"][0])


if __name__ == "__main__":
    unittest.main()
