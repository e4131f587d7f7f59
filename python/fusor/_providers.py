"""Execution provider names: ONNX Runtime's (``CPUExecutionProvider``) and fusor's own (``cpu``).

A session's providers are given in either spelling; fusor reports them in ORT's spelling where
ORT has one, so ``"CPUExecutionProvider" in fusor.get_available_providers()`` holds as with ORT.
"""
import warnings

from . import _fusor
from ._fusor import InvalidArgument

# ORT name -> fusor name, for the providers fusor has or may have.
ORT_TO_FUSOR = {
    "CPUExecutionProvider": "cpu",
    "XnnpackExecutionProvider": "xnnpack",
}
FUSOR_TO_ORT = {v: k for k, v in ORT_TO_FUSOR.items()}


def ort_name(fusor_name):
    return FUSOR_TO_ORT.get(fusor_name, fusor_name)


def get_available_providers():
    """The providers this build has, in priority order, in ORT's spelling where it has one."""
    return [ort_name(p) for p in _fusor.fusor_providers()]


def get_device():
    return "CPU"


def _known():
    return ", ".join("%s (%s)" % (ort_name(p), p) if ort_name(p) != p else p for p in _fusor.fusor_providers())


def to_fusor(providers):
    """fusor's names for a providers= list: names or (name, options) pairs, either spelling.
    As ONNX Runtime does, a name this build does not have (``CUDAExecutionProvider``, a
    misspelling) is dropped with a warning and the session uses the next available provider;
    InvalidArgument (listing the available ones) only when none of the names is available."""
    if providers is None:
        return ["cpu"], {}
    if isinstance(providers, str):
        providers = [providers]
    available = _fusor.fusor_providers()
    names, options, dropped = [], {}, []
    for p in providers:
        opts = {}
        if isinstance(p, (tuple, list)):
            if len(p) != 2 or not isinstance(p[1], dict):
                raise InvalidArgument("providers: expected a name or a (name, options dict) pair, got %r" % (p,))
            p, opts = p
        if not isinstance(p, str):
            raise InvalidArgument("providers: expected a provider name, got %r" % (p,))
        name = ORT_TO_FUSOR.get(p, p)
        if name not in available:
            dropped.append("unknown provider '%s'" % p if p not in ORT_TO_FUSOR else
                           "provider '%s' (fusor: %s) is not available in this build" % (p, name))
            continue
        if name not in names:
            names.append(name)
            options[ort_name(name)] = {str(k): str(v) for k, v in opts.items()}
    if not names:
        if dropped:
            raise InvalidArgument("%s (available: %s)" % ("; ".join(dropped), _known()))
        raise InvalidArgument("providers: the list is empty (available: %s)" % _known())
    for what in dropped:
        warnings.warn("%s; using %s (available: %s)" % (what, ", ".join(ort_name(n) for n in names), _known()),
                      UserWarning, stacklevel=3)
    return names, options
