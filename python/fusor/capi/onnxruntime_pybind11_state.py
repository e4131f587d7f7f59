"""ONNX Runtime's exception module, as fusor spells it: ``from onnxruntime.capi.onnxruntime_pybind11_state
import InvalidArgument`` becomes ``fusor.capi.onnxruntime_pybind11_state.InvalidArgument``."""
from .._fusor import Fail, FusorError, InvalidArgument, InvalidGraph, NoSuchFile  # noqa: F401
