// Runs an ONNX op's reference kernel from inside another kernel's compute(), for the reference
// kernels of fused ops, which are written as the composition of the ops they replace (obviously
// right, not fast). The inner node lives in a private one-node graph built once, on the first
// run (not at kernel creation: every fast kernel holds its reference kernel as a fallback it
// seldom calls, and building those graphs was a large part of restoring a cached session); its
// outputs are heap tensors (a reference kernel may allocate; fast ones do not use this).
// Thread-safe: concurrent runs build the graph once.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "kernels/kernel.h"

namespace fusor::fused {

class InnerOp {
 public:
  // `op` in the ONNX domain at `opset`; `num_inputs` formal inputs (absent ones passed as null).
  InnerOp(const std::string& op, int num_inputs, std::vector<Attribute> attrs = {}, int num_outputs = 1,
          int64_t opset = 17);
  // The outputs (undefined tensors for outputs not produced). `parent` supplies threads and scratch.
  std::vector<Tensor> run(KernelContext& parent, const std::vector<const Tensor*>& inputs) const;
  Tensor run1(KernelContext& parent, const std::vector<const Tensor*>& inputs) const { return run(parent, inputs)[0]; }

 private:
  struct Built {
    Graph graph;
    NodeId node = kNoNode;
    std::unique_ptr<Kernel> kernel;
  };
  const Built& built() const;

  std::string op_;
  int num_inputs_ = 0, num_outputs_ = 1;
  std::vector<Attribute> attrs_;
  int64_t opset_ = 0;
  mutable std::once_flag once_;
  mutable std::unique_ptr<Built> built_;
};

// The node's attributes without the fused-activation ones (what the inner op accepts).
std::vector<Attribute> attrs_without_activation(const Node& node);

// Transpose's perm swapping the last two axes of a rank-r tensor.
std::vector<int64_t> swap_last_two(int rank);
// Transpose perms between channels-last (N, spatial..., C) and channels-first (N, C, spatial...).
std::vector<int64_t> to_channels_first(int rank);
std::vector<int64_t> to_channels_last(int rank);
// A fresh tensor holding t with its axes permuted (output axis j is t's axis perm[j]).
Tensor permuted(const Tensor& t, const std::vector<int64_t>& perm);

}  // namespace fusor::fused
