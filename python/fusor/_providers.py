"""Execution provider names: ONNX Runtime's (``CPUExecutionProvider``) and fusor's own (``cpu``).

A session's providers are given in either spelling; fusor reports them in ORT's spelling where
ORT has one, so ``"CPUExecutionProvider" in fusor.get_available_providers()`` holds as with ORT.
"""
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
    Unknown or unavailable names raise InvalidArgument listing the available ones."""
    if providers is None:
        return ["cpu"], {}
    if isinstance(providers, str):
        providers = [providers]
    available = _fusor.fusor_providers()
    names, options = [], {}
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
            what = "unknown provider '%s'" % p if p not in ORT_TO_FUSOR else \
                "provider '%s' (fusor: %s) is not available in this build" % (p, name)
            raise InvalidArgument("%s (available: %s)" % (what, _known()))
        if name not in names:
            names.append(name)
            options[ort_name(name)] = {str(k): str(v) for k, v in opts.items()}
    if not names:
        raise InvalidArgument("providers: the list is empty (available: %s)" % _known())
    return names, options
