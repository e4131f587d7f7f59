#include "engine/rewrite/passes.h"

#include <cstdlib>
#include <memory>

#include "engine/rewrite/graph_util.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"
#include "core/ops/op_names.h"
#include "core/ops/op_traits.h"

namespace fusor {

namespace {

// A KernelContext for running one node on constant inputs, outside any session.
class FoldContext : public KernelContext {
 public:
  FoldContext(const Node& n, std::vector<const Tensor*> inputs, std::vector<bool> wanted)
      : node_(n), inputs_(std::move(inputs)), wanted_(std::move(wanted)), outputs_(wanted_.size()) {}
  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override { return i < num_inputs() ? inputs_[i] : nullptr; }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  bool output_wanted(int i) const override { return wanted_[i]; }
  Tensor& output(int i, const Shape& shape, DataType dtype) override {
    outputs_[i] = dtype == DataType::String ? Tensor::strings(shape, std::vector<std::string>(shape_numel(shape)))
                                            : Tensor(dtype, shape);
    return outputs_[i];
  }
  Tensor& output_alias(int i, int in, const Shape& shape) override {
    outputs_[i] = inputs_[in]->reshaped(shape);
    return outputs_[i];
  }
  void* scratch(size_t bytes) override {
    scratch_.push_back(make_aligned_buffer(bytes, false));
    return scratch_.back()->data();
  }
  ThreadPool& threads() override { return ThreadPool::serial(); }
  std::vector<Tensor> run_subgraph(const Graph&, const std::vector<Tensor>&) override {
    throw_internal(where() + ": constant folding does not run subgraphs");
  }
  std::string where() const override { return node_.describe(); }
  std::vector<Tensor>& outputs() { return outputs_; }

 private:
  const Node& node_;
  std::vector<const Tensor*> inputs_;
  std::vector<bool> wanted_;
  std::vector<Tensor> outputs_;
  std::vector<std::shared_ptr<Buffer>> scratch_;
};

// Turns n's outputs into initializers holding `results` and removes n.
void replace_with_constants(Graph& g, NodeId id, std::vector<Tensor>& results, std::vector<NodeId>& touched) {
  Node& n = g.node(id);
  std::vector<ValueId> outs = n.outputs;
  for (ValueId o : outs)
    if (o != kNoValue)
      for (const Use& u : g.value(o).uses) touched.push_back(u.node);
  for (ValueId in : n.inputs)
    if (in != kNoValue && g.value(in).producer != kNoNode) touched.push_back(g.value(in).producer);
  std::vector<ValueId> ins = n.inputs;
  g.remove_node(id);
  // Constant inputs nobody uses any more go with the node.
  for (ValueId in : ins) {
    if (in == kNoValue || !g.value(in).alive) continue;
    const Value& v = g.value(in);
    if (v.is_constant_initializer() && v.uses.empty() && !v.is_graph_output) g.remove_value(in);
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i] == kNoValue || !g.value(outs[i]).alive) continue;
    Value& v = g.value(outs[i]);
    auto t = std::make_shared<const Tensor>(std::move(results[i]));
    if (t->dtype() != DataType::String) {
      ValueType type = ValueType::tensor(t->dtype(), t->shape());
      v.type = type;
    }
    v.constant = std::move(t);
  }
}

// A DequantizeLinear of a constant that belongs to a QDQ group: read by a Conv, ConvTranspose,
// MatMul, Gemm or Gather (weights, embedding tables) whose other operand is dequantized too, or
// by an op whose result is quantized again. Folded, the weight would be float before the
// quantized-op rules see it (and 4x larger in a saved model); it stays for them, as in ONNX
// Runtime. A DequantizeLinear feeding float math only (a weight-only quantized model) is still
// folded.
bool feeds_qdq_group(const Graph& g, const Node& n) {
  const OpType& kDq = op::DequantizeLinear;
  const OpType& kQ = op::QuantizeLinear;
  const OpType* kWeighted[] = {&op::Conv, &op::ConvTranspose, &op::MatMul, &op::Gemm, &op::Gather};
  if (n.op != kDq || n.outputs.empty() || n.outputs[0] == kNoValue) return false;
  const ValueId self = n.outputs[0];
  auto dequantized = [&](ValueId v) {
    const NodeId p = v == kNoValue ? kNoNode : g.value(v).producer;
    return p != kNoNode && g.node(p).op == kDq;
  };
  for (const Use& u : g.value(self).uses) {
    const Node& c = g.node(u.node);
    if (c.op == kQ) continue;
    for (const OpType* w : kWeighted)
      if (c.op == *w)
        for (ValueId in : c.inputs)
          if (in != self && dequantized(in)) return true;
    for (ValueId o : c.outputs)
      if (o != kNoValue)
        for (const Use& cu : g.value(o).uses)
          if (g.node(cu.node).op == kQ) return true;
  }
  return false;
}

}  // namespace

bool constant_folding_pass(Graph& g, NodeId id, const FoldOptions& opts, std::vector<NodeId>& touched) {
  const Node& n = g.node(id);
  if (!n.op.domain().empty() && n.op.domain() != kFusorDomain) return false;
  if (!op_traits(n.op).deterministic || !g.subgraphs(id).empty() || touches_non_tensor(g, id) || feeds_qdq_group(g, n))
    return false;
  if (n.op == op::Constant) {
    if (n.outputs.size() != 1 || n.outputs[0] == kNoValue) return false;
    TensorPtr t = constant_of(g, n.outputs[0]);
    if (!t) return false;  // sparse_value and other forms stay
    std::vector<Tensor> r = {*t};
    replace_with_constants(g, id, r, touched);
    return true;
  }
  // Shape/Size of a statically shaped value.
  if ((n.op == op::Shape || n.op == op::Size) && n.inputs.size() == 1 && n.inputs[0] != kNoValue &&
      n.outputs.size() == 1) {
    auto s = g.value(n.inputs[0]).type.static_shape();
    if (!s) return false;
    std::vector<Tensor> r;
    if (n.op == op::Size) {
      r.push_back(Tensor::scalar<int64_t>(shape_numel(*s)));
    } else {
      int64_t rank = static_cast<int64_t>(s->size());
      int64_t start = n.attr_int("start", 0), end = n.attr_int("end", rank);
      if (start < 0) start += rank;
      if (end < 0) end += rank;
      start = std::clamp<int64_t>(start, 0, rank);
      end = std::clamp<int64_t>(end, start, rank);
      std::vector<int64_t> dims(s->begin() + start, s->begin() + end);
      r.push_back(Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims));
    }
    replace_with_constants(g, id, r, touched);
    return true;
  }
  if (n.num_present_inputs() == 0) return false;
  std::vector<TensorPtr> consts(n.inputs.size());
  std::vector<const Tensor*> ins(n.inputs.size(), nullptr);
  size_t in_bytes = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] == kNoValue) continue;
    consts[i] = constant_of(g, n.inputs[i]);
    if (!consts[i]) return false;
    ins[i] = consts[i].get();
    in_bytes += consts[i]->nbytes();
  }
  size_t limit = std::max(opts.max_bytes, in_bytes * static_cast<size_t>(std::max(1, op_traits(n.op).fold_growth)));
  // Skip before running when the inferred output size already says no.
  for (ValueId o : n.outputs) {
    if (o == kNoValue) continue;
    auto s = g.value(o).type.static_shape();
    if (s && static_cast<size_t>(shape_numel(*s)) * std::max<size_t>(1, dtype_size(g.value(o).type.elem)) > limit)
      return false;
  }
  const KernelRegistry& reg = KernelRegistry::global();
  int64_t opset = n.op.domain().empty() ? opts.opset : 1;
  if (!reg.find(n.op, opset)) return false;
  KernelInfo info;
  info.node = &n;
  info.graph = &g;
  info.opset = opset;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    info.input_types.push_back(n.inputs[i] == kNoValue ? nullptr : &g.value(n.inputs[i]).type);
    info.const_inputs.push_back(consts[i]);
  }
  std::vector<bool> wanted;
  for (ValueId o : n.outputs) {
    info.output_types.push_back(o == kNoValue ? nullptr : &g.value(o).type);
    wanted.push_back(o != kNoValue);
  }
  FoldContext ctx(n, ins, wanted);
  try {
    auto kernel = reg.create(info);
    kernel->compute(ctx);
  } catch (const std::exception&) {
    return false;  // the node stays; running the model will report the problem where it belongs
  }
  size_t out_bytes = 0;
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i] == kNoValue) continue;
    if (!ctx.outputs()[i].defined() || !ctx.outputs()[i].is_plain()) return false;
    out_bytes += ctx.outputs()[i].nbytes();
  }
  if (out_bytes > limit) return false;
  // Outputs that alias an input share its storage; give them their own.
  for (Tensor& t : ctx.outputs())
    if (t.defined() && t.dtype() != DataType::String) t = t.clone();
  replace_with_constants(g, id, ctx.outputs(), touched);
  return true;
}

}  // namespace fusor
