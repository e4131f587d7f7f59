"""fusor.capi mirrors onnxruntime.capi for scripts that import ORT's exception classes from there."""
from . import onnxruntime_pybind11_state  # noqa: F401
