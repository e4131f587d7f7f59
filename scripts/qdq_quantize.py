"""Static QDQ quantization in the form ONNX Runtime's `quantize_static` writes (QuantFormat.QDQ,
MinMax calibration, per_channel=True, activation_type=QUInt8, weight_type=QInt8), without ORT.

Written from a reading of ORT's quantization package (onnxruntime/python/tools/quantization:
qdq_quantizer.py, base_quantizer.py, quant_utils.py, registry.py, operators/*.py); the format is
theirs, the code is ours. Used by scripts/make_qdq_models.py; see that file for the command line.

What a quantized model looks like (as quantize_static leaves it):
  - Conv / Gemm / MatMul weights (float initializers): int8, symmetric (zero point 0, range
    [-127, 127], or [-64, 64] with reduce_range=True), one scale per output channel (Conv axis 0;
    MatMul axis 1; Gemm axis 0 with transB=1, else 1), behind a DequantizeLinear with that
    `axis`: `W_quantized`, `W_scale`, `W_zero_point`, node `W_DequantizeLinear`.
  - Conv / Gemm biases: int32, scale = input scale x weight scale (per channel), zero point 0,
    behind a DequantizeLinear (`B_quantized`, `B_quantized_scale`, `B_quantized_zero_point`).
  - Activations: uint8, asymmetric, from the calibrated [min, max] widened to hold 0:
    scale = (max - min) / 255, zero point = round(-min / scale); one QuantizeLinear ->
    DequantizeLinear pair per tensor (`T_QuantizeLinear`, `T_DequantizeLinear`) that every
    consumer reads; a graph output keeps its name on the DequantizeLinear's output.
  - Which ops: the union of ORT's QLinear and QDQ registries (DEFAULT_OPS). Per op kind:
      weighted (Conv, Gemm, MatMul): input, weight, bias and output as above;
      removable activations (Relu, Clip): removed when the input's producer is quantized and has
        no other consumer, its output taking the activation's name and calibrated range;
      same-as-input ops (Reshape, Transpose, Squeeze, Unsqueeze, AveragePool, MaxPool, Resize,
        Slice, Gather, Split): output quantized with the input's scale and zero point, and only
        when the input is quantized (Gather's float initializer data is quantized as uint8);
      every other op in the set (Add, Mul, Concat, Sigmoid, Softmax, GlobalAveragePool, ...):
        every float input (a float initializer: uint8 asymmetric over its own min/max) and
        output, each with its own parameters. Softmax's output range is [0, 1].
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

WEIGHTED = {"Conv", "Gemm", "MatMul"}
REMOVABLE = {"Relu", "Clip"}
SAME_AS_INPUT = {"Reshape", "Transpose", "Squeeze", "Unsqueeze", "AveragePool", "MaxPool", "Resize",
                 "Slice", "Gather", "Split"}
GENERIC = {"Add", "Mul", "Concat", "Sigmoid", "Softmax", "GlobalAveragePool", "LeakyRelu", "Where",
           "ArgMax", "Pad"}
DEFAULT_OPS = WEIGHTED | REMOVABLE | SAME_AS_INPUT | GENERIC
# Not in quantize_static's default set, accepted by --op-types (QDQOperatorBase handling).
OPTIONAL_OPS = {"HardSwish", "HardSigmoid", "Tanh"}


def u8_params(rmin, rmax):
    """uint8 asymmetric scale and zero point of a [rmin, rmax] range (quant_utils.compute_scale_zp)."""
    rmin = min(float(rmin), 0.0)
    rmax = max(float(rmax), 0.0)
    scale = np.float32((rmax - rmin) / 255.0)
    if scale < np.finfo(np.float32).tiny:
        return np.float32(1.0), np.uint8(0)
    zp = np.round(0.0 - rmin / float(scale))
    return scale, np.uint8(np.clip(zp, 0, 255))


def quantize_u8(x, scale, zp):
    q = np.round(x.astype(np.float32) / scale) + float(zp)
    return np.clip(q, 0, 255).astype(np.uint8)


def weight_qmax(reduce_range):
    """quantize_static's symmetric int8 weight range: [-127, 127], or [-64, 64] with reduce_range
    (7-bit weights, which ORT advises for machines without VNNI: their products cannot saturate
    vpmaddubsw's int16 pair sums)."""
    return 64 if reduce_range else 127


def quantize_weight_per_channel(w, axis, reduce_range=False):
    """int8 symmetric per-channel: scale = absmax / qmax per slice along `axis`, zero point 0."""
    qmax = weight_qmax(reduce_range)
    moved = np.moveaxis(w.astype(np.float32), axis, 0)
    absmax = np.abs(moved.reshape(moved.shape[0], -1)).max(axis=1)
    scale = (2.0 * absmax.astype(np.float64) / (2.0 * qmax)).astype(np.float32)
    scale[scale < np.finfo(np.float32).tiny] = 1.0
    shape = [1] * moved.ndim
    shape[0] = -1
    q = np.clip(np.round(moved / scale.reshape(shape)), -qmax, qmax).astype(np.int8)
    return np.ascontiguousarray(np.moveaxis(q, 0, axis)), scale


class _Graph:
    """Producer/consumer maps over a GraphProto, kept up to date by the few edits we make."""

    def __init__(self, model):
        self.model = model
        self.g = model.graph
        self.inits = {t.name: t for t in self.g.initializer}
        self.outputs = {o.name for o in self.g.output}
        self.inputs = {i.name for i in self.g.input}
        inferred = onnx.shape_inference.infer_shapes(model)
        self.elem = {}
        for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
            if vi.type.HasField("tensor_type"):
                self.elem[vi.name] = vi.type.tensor_type.elem_type
        for t in self.g.initializer:
            self.elem[t.name] = t.data_type

    def consumers(self, name):
        return [n for n in self.g.node if name in n.input]

    def producer(self, name):
        for n in self.g.node:
            if name in n.output:
                return n
        return None

    def is_float(self, name):
        return bool(name) and self.elem.get(name) == TensorProto.FLOAT


def constants_to_initializers(model):
    """Constant nodes holding a tensor become initializers (what ORT's pre-processing leaves)."""
    keep = []
    for n in model.graph.node:
        if n.op_type == "Constant" and len(n.attribute) == 1 and n.attribute[0].name == "value":
            t = onnx.TensorProto()
            t.CopyFrom(n.attribute[0].t)
            t.name = n.output[0]
            model.graph.initializer.append(t)
        else:
            keep.append(n)
    del model.graph.node[:]
    model.graph.node.extend(keep)


def tensors_to_calibrate(model, op_types=DEFAULT_OPS):
    """The float inputs and outputs of the nodes to quantize that are not initializers."""
    g = _Graph(model)
    names = []
    for n in model.graph.node:
        if n.op_type not in op_types:
            continue
        for t in list(n.input) + list(n.output):
            if g.is_float(t) and t not in g.inits and t not in names:
                names.append(t)
    return names


def augment_for_calibration(model, names):
    """A copy whose outputs are ReduceMin/ReduceMax of each named tensor (ORT's MinMaxCalibrater)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.output[:]
    for i, t in enumerate(names):
        for op in ("ReduceMin", "ReduceMax"):
            out = "calib_%d_%s" % (i, op)
            m.graph.node.append(helper.make_node(op, [t], [out], name=out, keepdims=0))
            m.graph.output.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, []))
    return m


def adjust_ranges(model, ranges, op_types=DEFAULT_OPS):
    """base_quantizer.adjust_tensor_ranges: a Relu/Clip's input takes its output's range when it has
    no other consumer; Softmax outputs are [0, 1]."""
    g = _Graph(model)
    for n in model.graph.node:
        if n.op_type not in op_types:
            continue
        if n.op_type in REMOVABLE:
            if len(g.consumers(n.input[0])) == 1 and n.input[0] in ranges and n.output[0] in ranges:
                ranges[n.input[0]] = ranges[n.output[0]]
        elif n.op_type == "Softmax":
            ranges[n.output[0]] = (0.0, 1.0)


def quantize(model, ranges, op_types=DEFAULT_OPS, reduce_range=False):
    """Rewrites `model` (fp32, constants as initializers) in place into its QDQ form. `ranges` maps a
    calibrated tensor to (min, max)."""
    g = _Graph(model)
    acts = {}        # activation tensor -> the tensor whose parameters it uses (itself or, shared, its input's)
    weights = {}     # initializer -> ("weight", axis) | ("act", None)
    biases = []      # (bias, input, weight)
    removed = []

    def mark_act(t):
        if not g.is_float(t):
            return
        if t in g.inits:
            weights.setdefault(t, ("act", None))
        elif t not in acts:
            acts[t] = t

    def is_quantized(t):
        return t in acts or t in weights

    for n in list(model.graph.node):
        op = n.op_type
        if op not in op_types:
            continue
        if op in WEIGHTED:
            for idx, t in enumerate(n.input):
                if not t:
                    continue
                if op in ("Conv", "Gemm") and idx == 2:
                    if t in g.inits and g.is_float(t):
                        biases.append((t, n.input[0], n.input[1], n))
                    continue
                if t in g.inits and g.is_float(t):
                    dims = len(g.inits[t].dims)
                    if op == "Conv":
                        axis = 0
                    elif op == "Gemm":
                        transb = next((a.i for a in n.attribute if a.name == "transB"), 0)
                        axis = 0 if transb else 1
                    else:
                        axis = 1
                    weights[t] = ("weight", axis if axis < dims else None)
                else:
                    mark_act(t)
            mark_act(n.output[0])
        elif op in REMOVABLE:
            x, y = n.input[0], n.output[0]
            if not is_quantized(x):
                continue
            prod = g.producer(x)
            if (y in ranges and prod is not None and len(g.consumers(x)) == 1 and x not in g.outputs
                    and x not in g.inputs):
                for i, o in enumerate(prod.output):
                    if o == x:
                        prod.output[i] = y
                acts.pop(x, None)
                removed.append(n)
            else:
                mark_act(x)
            mark_act(y)
        elif op in SAME_AS_INPUT:
            x = n.input[0]
            if op == "Gather" and x in g.inits and g.is_float(x):
                mark_act(x)
            if not is_quantized(x) or not g.is_float(x):
                continue
            src = acts.get(x, x)
            for y in n.output:
                if g.is_float(y) and y not in acts:
                    acts[y] = src
        else:
            for t in list(n.input) + list(n.output):
                mark_act(t)
    for n in removed:
        model.graph.node.remove(n)

    missing = [t for t, src in acts.items() if src not in weights and src not in ranges]
    if missing:
        raise ValueError("no calibrated range for %s" % ", ".join(missing[:5]))

    new_inits, new_nodes = [], []
    params = {}  # tensor -> (scale name, zero-point name, scale value)

    def rename_uses(old, new, skip=None):
        for n in model.graph.node:
            if n is skip:
                continue
            for i, t in enumerate(n.input):
                if t == old:
                    n.input[i] = new
        for n in new_nodes:
            if n is skip:
                continue
            for i, t in enumerate(n.input):
                if t == old:
                    n.input[i] = new

    # Initializers quantized as activations (uint8 over their own range) or as weights (int8 per channel).
    for t, (kind, axis) in weights.items():
        w = numpy_helper.to_array(g.inits[t])
        dq_out = t + "_DequantizeLinear_Output"
        if kind == "weight":
            if axis is None:
                qmax = weight_qmax(reduce_range)
                absmax = float(np.abs(w).max()) if w.size else 0.0
                scale = np.float32(2.0 * absmax / (2.0 * qmax)) or np.float32(1.0)
                q = np.clip(np.round(w / scale), -qmax, qmax).astype(np.int8)
                s, z, attrs = np.array(scale, np.float32), np.array(0, np.int8), {}
            else:
                q, s = quantize_weight_per_channel(w, axis, reduce_range)
                z, attrs = np.zeros(s.shape, np.int8), {"axis": axis}
        else:
            scale, zp = u8_params(w.min() if w.size else 0, w.max() if w.size else 0)
            q, s, z, attrs = quantize_u8(w, scale, zp), np.array(scale, np.float32), np.array(zp, np.uint8), {}
        new_inits += [numpy_helper.from_array(q, t + "_quantized"), numpy_helper.from_array(s, t + "_scale"),
                      numpy_helper.from_array(z, t + "_zero_point")]
        new_nodes.append(helper.make_node("DequantizeLinear", [t + "_quantized", t + "_scale", t + "_zero_point"],
                                          [dq_out], t + "_DequantizeLinear", **attrs))
        params[t] = (t + "_scale", t + "_zero_point", s)
        rename_uses(t, dq_out, skip=new_nodes[-1])

    # Activations: one Q -> DQ pair per tensor; shared tensors reuse their source's parameters.
    def act_params(t):
        src = acts[t]
        while src != acts.get(src, src):
            src = acts[src]
        if src not in params:
            scale, zp = u8_params(*ranges[src])
            new_inits.append(numpy_helper.from_array(np.array(scale, np.float32), src + "_scale"))
            new_inits.append(numpy_helper.from_array(np.array(zp, np.uint8), src + "_zero_point"))
            params[src] = (src + "_scale", src + "_zero_point", np.float32(scale))
        return params[src]

    for t in acts:
        sname, zname, _ = act_params(t)
        q_in, q_out, dq_out = t, t + "_QuantizeLinear_Output", t + "_DequantizeLinear_Output"
        if t in g.outputs:
            q_in, dq_out = t + "_QuantizeLinear_Input", t
            prod = g.producer(t)
            for i, o in enumerate(prod.output):
                if o == t:
                    prod.output[i] = q_in
        else:
            rename_uses(t, dq_out)
        new_nodes.append(helper.make_node("QuantizeLinear", [q_in, sname, zname], [q_out], t + "_QuantizeLinear"))
        new_nodes.append(helper.make_node("DequantizeLinear", [q_out, sname, zname], [dq_out], t + "_DequantizeLinear"))

    # Biases: int32 at input scale x weight scale, zero point 0.
    shared = {b for b, _, _, _ in biases if sum(1 for c in biases if c[0] == b) > 1}
    for b, x, w, node in biases:
        if x not in acts or w not in weights or weights[w][0] != "weight":
            continue
        # A bias shared by several nodes (initializer dedup) gets one quantized copy per node.
        name = b + "_" + (node.name or node.output[0]) if b in shared else b
        xs = act_params(x)[2]
        ws = params[w][2]
        bscale = (np.float32(xs) * ws.astype(np.float32)).astype(np.float32).reshape(-1)
        bscale[bscale < np.finfo(np.float32).tiny] = 1.0
        bv = numpy_helper.to_array(g.inits[b]).astype(np.float32).reshape(-1)
        if bscale.size == 1 and bv.size > 1:
            bscale = np.full(bv.shape, bscale[0], np.float32)
        q = np.clip(np.round(bv / bscale), -2**31, 2**31 - 1).astype(np.int32)
        qn = name + "_quantized"
        new_inits += [numpy_helper.from_array(q, qn), numpy_helper.from_array(bscale, qn + "_scale"),
                      numpy_helper.from_array(np.zeros(bscale.shape, np.int32), qn + "_zero_point")]
        dq_out = name + "_DequantizeLinear_Output"
        new_nodes.append(helper.make_node("DequantizeLinear", [qn, qn + "_scale", qn + "_zero_point"], [dq_out],
                                          name + "_DequantizeLinear", axis=0))
        for i, t in enumerate(node.input):
            if i == 2 and t == b:
                node.input[i] = dq_out
        weights[b] = ("bias", 0)

    # Drop the initializers nothing reads any more (replaced weights, Clip bounds); keep the graph topologically sorted.
    nodes = list(model.graph.node) + new_nodes
    used = {t for n in nodes for t in n.input} | g.outputs
    kept = [t for t in list(model.graph.initializer) + new_inits if t.name in used]
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    del model.graph.node[:]
    model.graph.node.extend(_topo_sort(nodes, {t.name for t in model.graph.initializer} |
                                       {i.name for i in model.graph.input}))
    model.producer_name = "fusor.qdq_quantize"
    return model


def _topo_sort(nodes, available):
    ready = set(available) | {""}
    out, pending = [], list(nodes)
    while pending:
        rest = []
        for n in pending:
            if all(t in ready for t in n.input):
                out.append(n)
                ready.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            raise ValueError("cycle or dangling input near node %s" % rest[0].name)
        pending = rest
    return out
