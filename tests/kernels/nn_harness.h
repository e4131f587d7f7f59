// Test harness for single kernels: builds a one-node graph, creates the node's kernel through a
// KernelRegistry and runs it with a minimal KernelContext (heap-allocated outputs and scratch,
// the process-wide serial thread pool).
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/graph.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"

namespace fusor::test {

class HarnessContext : public KernelContext {
 public:
  HarnessContext(std::vector<const Tensor*> inputs, std::vector<bool> wanted, std::string where)
      : inputs_(std::move(inputs)), wanted_(std::move(wanted)), outputs_(wanted_.size()), where_(std::move(where)) {}

  int num_inputs() const override { return static_cast<int>(inputs_.size()); }
  const Tensor* input(int i) const override { return inputs_[i]; }
  int num_outputs() const override { return static_cast<int>(outputs_.size()); }
  bool output_wanted(int i) const override { return wanted_[i]; }
  Tensor& output(int i, const Shape& shape, DataType dtype) override {
    if (inplace_.first >= 0 && inplace_.second == i) {
      // Simulate the planner's in-place reuse: the output shares the input's storage.
      const Tensor& in = *inputs_[inplace_.first];
      outputs_[i] = Tensor(dtype, shape, in.buffer(), in.offset());
      return outputs_[i];
    }
    // Filled with a poison pattern so a kernel that forgets to write an element is caught.
    outputs_[i] = Tensor(dtype, shape);
    if (dtype_size(dtype) > 0) std::memset(outputs_[i].raw(), 0x7f, outputs_[i].nbytes());
    return outputs_[i];
  }
  Tensor& output_alias(int i, int in, const Shape& shape) override {
    outputs_[i] = inputs_[in]->reshaped(shape);
    return outputs_[i];
  }
  void* scratch(size_t bytes) override {
    scratch_.push_back(make_aligned_buffer(bytes ? bytes : 1, false));
    return scratch_.back()->data();
  }
  ThreadPool& threads() override { return ThreadPool::serial(); }
  std::vector<Tensor> run_subgraph(const Graph&, const std::vector<Tensor>&) override {
    throw_internal("run_subgraph not available in the kernel harness");
  }
  std::string where() const override { return where_; }

  std::vector<Tensor>& outputs() { return outputs_; }
  // Makes output `out` reuse input `in`'s buffer (the input is overwritten).
  void set_inplace(int in, int out) { inplace_ = {in, out}; }

 private:
  std::vector<const Tensor*> inputs_;
  std::vector<bool> wanted_;
  std::vector<Tensor> outputs_;
  std::vector<std::shared_ptr<Buffer>> scratch_;
  std::string where_;
  std::pair<int, int> inplace_{-1, -1};
};

// Creates and runs the kernel of `node` (in `graph`) on `inputs` (nullptr: absent); returns the
// outputs (undefined tensors for outputs not wanted). `impl` picks an implementation.
// With `inplace`, the kernel's first inplace_pairs() entry is honoured: that output is written
// over its input's buffer (the caller's input tensor is clobbered).
inline std::vector<Tensor> run_kernel(const KernelRegistry& reg, const Graph& graph, const Node& node, int64_t opset,
                                      const std::vector<const Tensor*>& inputs, std::string_view impl = "reference",
                                      bool inplace = false) {
  KernelInfo info;
  info.node = &node;
  info.graph = &graph;
  info.opset = opset;
  for (ValueId v : node.inputs) {
    info.input_types.push_back(v == kNoValue ? nullptr : &graph.value(v).type);
    info.const_inputs.push_back(v == kNoValue ? nullptr : graph.value(v).constant);
  }
  for (ValueId v : node.outputs) info.output_types.push_back(v == kNoValue ? nullptr : &graph.value(v).type);
  std::unique_ptr<Kernel> k = reg.create(info, impl);
  std::vector<bool> wanted;
  for (ValueId v : node.outputs) wanted.push_back(v != kNoValue);
  HarnessContext ctx(inputs, wanted, node.describe());
  if (inplace) {
    const auto pairs = k->inplace_pairs();
    if (pairs.empty()) throw_internal(node.describe() + ": kernel declares no in-place pair");
    ctx.set_inplace(pairs[0].first, pairs[0].second);
  }
  k->compute(ctx);
  return std::move(ctx.outputs());
}

// A one-node graph over fresh values, for hand-written cases.
struct OneNode {
  Graph graph;
  NodeId id = kNoNode;
  OneNode(const std::string& op, int num_inputs, int num_outputs, std::vector<Attribute> attrs = {}) {
    std::vector<ValueId> ins;
    for (int i = 0; i < num_inputs; ++i) ins.push_back(graph.add_value("in" + std::to_string(i)));
    id = graph.create_node(OpType::onnx(op), ins, num_outputs, std::move(attrs), "n");
  }
  const Node& node() const { return graph.node(id); }
};

// Runs `op` with attributes on the given inputs through the global registry's reference kernel.
inline std::vector<Tensor> run_op(const std::string& op, const std::vector<const Tensor*>& inputs,
                                  std::vector<Attribute> attrs = {}, int num_outputs = 1, int64_t opset = 17,
                                  bool inplace = false) {
  OneNode one(op, static_cast<int>(inputs.size()), num_outputs, std::move(attrs));
  return run_kernel(KernelRegistry::global(), one.graph, one.node(), opset, inputs, "reference", inplace);
}

// The elements of t as doubles, for comparisons with hand-computed values.
inline std::vector<double> values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(t.as_double(i));
  return v;
}

// t has want's element count and each element is within tol of want's.
inline void expect_near(const Tensor& t, const std::vector<double>& want, double tol = 1e-5) {
  ASSERT_EQ(t.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(t.as_double(static_cast<int64_t>(i)), want[i], tol) << "element " << i;
}

}  // namespace fusor::test
