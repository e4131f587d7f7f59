"""fusor for Python, in ONNX Runtime's names: a script written for onnxruntime runs with
``import fusor as ort`` (docs/python.md).

    import fusor as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.optimized_model_filepath = "model.opt.onnx"
    sess = ort.InferenceSession("model.onnx", so, providers=["CPUExecutionProvider"])
    outputs = sess.run(None, {"input": x})

fusor's extras: ``sess.optimization_report()``, ``sess.arena_stats()``, ``fusor.rules.check``,
``fusor.rules.test``.
"""
from ._fusor import (  # noqa: F401  (re-exported)
    Cancelled,
    ExecutionMode,
    Fail,
    FusorError,
    GraphOptimizationLevel,
    InvalidArgument,
    InvalidGraph,
    ModelMetadata,
    NodeArg,
    NoSuchFile,
    RunOptions,
    SessionOptions,
    rules,
)
from . import _fusor
from ._providers import get_available_providers, get_device  # noqa: F401
from ._session import InferenceSession  # noqa: F401
from . import capi  # noqa: F401  (fusor.capi.onnxruntime_pybind11_state, as ORT's)

__version__ = _fusor.version()


def set_default_logger_severity(level):
    """Accepted for ONNX Runtime scripts; fusor's warnings go to stderr regardless."""


def set_default_logger_verbosity(level):
    """Accepted for ONNX Runtime scripts; no effect."""

__all__ = [
    "Cancelled", "ExecutionMode", "Fail", "FusorError", "GraphOptimizationLevel", "InferenceSession", "InvalidArgument",
    "InvalidGraph", "ModelMetadata", "NodeArg", "NoSuchFile", "RunOptions", "SessionOptions", "get_available_providers",
    "get_device", "rules", "set_default_logger_severity", "set_default_logger_verbosity", "__version__",
]
