#include "kernels/fused/inner_op.h"

#include <utility>

#include "core/util/error.h"
#include "kernels/common/strided_copy.h"

namespace fusor::fused {
namespace {

class InnerContext : public KernelContext {
 public:
  InnerContext(KernelContext& parent, const std::vector<const Tensor*>& inputs, int num_outputs)
      : parent_(parent), inputs_(inputs), outputs_(num_outputs) {}
  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override { return inputs_[i]; }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  bool output_wanted(int) const override { return true; }
  Tensor& output(int i, const Shape& shape, DataType dtype) override { return outputs_[i] = Tensor(dtype, shape); }
  Tensor& output_alias(int i, int in, const Shape& shape) override { return outputs_[i] = inputs_[in]->reshaped(shape); }
  void* scratch(size_t bytes) override { return parent_.scratch(bytes); }
  ThreadPool& threads() override { return parent_.threads(); }
  std::vector<Tensor> run_subgraph(const Graph&, const std::vector<Tensor>&) override {
    throw_internal(parent_.where() + ": an inner op has no subgraph");
  }
  std::string where() const override { return parent_.where(); }
  std::vector<Tensor>& outputs() { return outputs_; }

 private:
  KernelContext& parent_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor> outputs_;
};

}  // namespace

InnerOp::InnerOp(const std::string& op, int num_inputs, std::vector<Attribute> attrs, int num_outputs, int64_t opset)
    : op_(op), num_inputs_(num_inputs), num_outputs_(num_outputs), attrs_(std::move(attrs)), opset_(opset) {}

const InnerOp::Built& InnerOp::built() const {
  std::call_once(once_, [this] {
    auto b = std::make_unique<Built>();
    std::vector<ValueId> ins;
    for (int i = 0; i < num_inputs_; ++i) ins.push_back(b->graph.add_value("in" + std::to_string(i)));
    b->node = b->graph.create_node(OpType::onnx(op_), ins, num_outputs_, attrs_, "inner_" + op_);
    KernelInfo info;
    info.node = &b->graph.node(b->node);
    info.graph = &b->graph;
    info.opset = opset_;
    for (ValueId v : info.node->inputs) {
      info.input_types.push_back(&b->graph.value(v).type);
      info.const_inputs.push_back(nullptr);
    }
    for (ValueId v : info.node->outputs) info.output_types.push_back(&b->graph.value(v).type);
    b->kernel = KernelRegistry::global().create(info, "reference");
    built_ = std::move(b);
  });
  return *built_;
}

std::vector<Tensor> InnerOp::run(KernelContext& parent, const std::vector<const Tensor*>& inputs) const {
  const Built& b = built();
  InnerContext ctx(parent, inputs, static_cast<int>(b.graph.node(b.node).outputs.size()));
  b.kernel->compute(ctx);
  return std::move(ctx.outputs());
}

std::vector<Attribute> attrs_without_activation(const Node& node) {
  std::vector<Attribute> out;
  for (const Attribute& a : node.attrs)
    if (a.name != "activation" && a.name != "activation_params") out.push_back(a);
  return out;
}

std::vector<int64_t> swap_last_two(int rank) {
  std::vector<int64_t> p;
  for (int i = 0; i < rank; ++i) p.push_back(i);
  if (rank >= 2) std::swap(p[rank - 1], p[rank - 2]);
  return p;
}

std::vector<int64_t> to_channels_first(int rank) {
  std::vector<int64_t> p{0, rank - 1};
  for (int i = 1; i < rank - 1; ++i) p.push_back(i);
  return p;
}

std::vector<int64_t> to_channels_last(int rank) {
  std::vector<int64_t> p{0};
  for (int i = 2; i < rank; ++i) p.push_back(i);
  p.push_back(1);
  return p;
}

Tensor permuted(const Tensor& t, const std::vector<int64_t>& perm) {
  const int r = t.rank();
  std::vector<int64_t> stride(r, 1);
  for (int d = r - 2; d >= 0; --d) stride[d] = stride[d + 1] * t.dim(d + 1);
  Shape shape;
  std::vector<int64_t> src_strides;
  for (int64_t p : perm) {
    shape.push_back(t.dim(static_cast<int>(p)));
    src_strides.push_back(stride[p]);
  }
  Tensor out(t.dtype(), shape);
  strided_copy(t, 0, src_strides, out);
  return out;
}

}  // namespace fusor::fused
