"""InferenceSession with ONNX Runtime's signature and behaviour, over fusor._fusor._Session."""
import datetime
import json
import os

from . import _fusor
from ._fusor import InvalidArgument
from ._providers import ort_name, to_fusor


class InferenceSession:
    """Loads, optimizes (writing ``sess_options.optimized_model_filepath`` when set) and plans a
    model once; ``run`` it many times.

    ``path_or_bytes``: a path (str or os.PathLike) or the serialized model (bytes).
    ``providers``: names or (name, options) pairs, ORT's names (``CPUExecutionProvider``) or
    fusor's (``cpu``); default: cpu.
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        if sess_options is None:
            sess_options = _fusor.SessionOptions()
        elif not isinstance(sess_options, _fusor.SessionOptions):
            raise InvalidArgument("sess_options: expected fusor.SessionOptions, got %s" % type(sess_options).__name__)
        if provider_options is not None and providers is not None:
            if len(provider_options) != len(providers):
                raise InvalidArgument("provider_options: %d entries for %d providers" % (len(provider_options), len(providers)))
            providers = [(p, o) for p, o in zip(providers, provider_options)]
        names, self._provider_options = to_fusor(providers)
        if not isinstance(path_or_bytes, (bytes, bytearray)):
            self._model_path = os.fspath(path_or_bytes)
        else:
            self._model_path = None
        self._sess_options = sess_options.__copy__()
        self._sess = _fusor._Session(path_or_bytes, self._sess_options, names)
        self._inputs = self._sess.inputs()
        self._outputs = self._sess.outputs()
        self._profile_events = []

    # -- ONNX Runtime's API ---------------------------------------------------------------

    def run(self, output_names, input_feed, run_options=None):
        """The outputs named (all when ``output_names`` is None or empty), as numpy arrays.
        Raises InvalidArgument for an unknown, missing or duplicated input, a wrong dtype, rank or
        known dimension, or an unknown output name. ``run_options`` (fusor.RunOptions): setting its
        ``terminate`` from another thread, or its ``timeout_ms``, cancels the run at the next node
        boundary with fusor.Cancelled (a Fail)."""
        if not isinstance(input_feed, dict):
            raise InvalidArgument("input_feed: expected a dict of input name -> array, got %s" % type(input_feed).__name__)
        if run_options is not None and not isinstance(run_options, _fusor.RunOptions):
            raise InvalidArgument("run_options: expected fusor.RunOptions, got %s" % type(run_options).__name__)
        return self._sess.run(output_names or None, input_feed, run_options)

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []

    def get_providers(self):
        return [ort_name(p) for p in self._sess.providers()]

    def get_provider_options(self):
        return dict(self._provider_options)

    def get_session_options(self):
        return self._sess_options

    def get_modelmeta(self):
        return self._sess.metadata()

    def get_profiling_start_time_ns(self):
        return 0

    def end_profiling(self):
        """Writes the per-node times of every run since the session was made (or since the last
        end_profiling) as a Chrome trace JSON file, ``<profile_file_prefix>_<date>.json`` in the
        working directory, and returns its name; "" when profiling is off (as ONNX Runtime)."""
        if not self._sess_options.enable_profiling:
            return ""
        events = []
        for name, op, depth, ts, dur, run in self._sess.take_profile():
            if depth < 0:
                events.append({"cat": "Session", "pid": os.getpid(), "tid": 0, "ph": "X", "name": name,
                               "ts": round(ts, 3), "dur": round(dur, 3), "args": {"run": run}})
            else:
                events.append({"cat": "Node", "pid": os.getpid(), "tid": depth, "ph": "X", "name": name + "_kernel_time",
                               "ts": round(ts, 3), "dur": round(dur, 3),
                               "args": {"op_name": op, "node_name": name, "run": run, "depth": depth}})
        stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S-%f")
        path = "%s_%s.json" % (self._sess_options.profile_file_prefix, stamp)
        with open(path, "w") as f:
            json.dump(events, f)
        return path

    # -- fusor's extras -------------------------------------------------------------------

    def optimization_report(self):
        """{'level', 'providers', 'rules_fired': {rule: times}, 'nodes_before', 'nodes_after',
        'cache': 'hit'|'miss'|'off', 'rule_set_hash', 'optimized_model_path', load/optimize/save/
        plan/init times in ms}."""
        return self._sess.optimization_report()

    def arena_stats(self):
        """The memory plan and the last run's allocations: {'arena_bytes', 'scratch_bytes',
        'naive_bytes', 'buffers', 'intermediates', 'inplace', 'last_run_allocs',
        'last_run_fallbacks'}."""
        return self._sess.arena_stats()

    def timing(self):
        """{'load_ms', 'optimize_ms', 'save_ms', 'plan_ms', 'init_ms', 'runs', 'last_run_ms',
        'total_run_ms'}."""
        return self._sess.timing()
