// The normalized view of a node that patterns are matched against, computed once per node and
// cached until the node changes.
//
// Normal form:
// - `axis` / `axes` attributes are non-negative where the rank is known (the input's rank; the
//   output's for Unsqueeze);
// - Transpose without `perm` gets the explicit reversed permutation when the rank is known;
// - Conv, ConvTranspose, the pools (and fusor's conv/pool ops) without `pads` and without an
//   auto_pad other than NOTSET get explicit zero pads when the input's rank is known;
// - inputs that older or newer opsets spell as attributes are seen as attributes: Clip's constant
//   min/max inputs become `min`/`max` (as Clip-6's attributes were), constant `axes` inputs of
//   Reduce*/Squeeze/Unsqueeze become the `axes` attribute. The lifted inputs drop out of the input
//   list (trailing absent inputs too). The dsl lowers a literal written in such a slot
//   (`Clip(x, 0.0, 6.0)`) to an attribute constraint using lifted_input_attr() (core/ops/op_traits.h); the rewriter puts
//   such attributes back as inputs where the model's opset wants inputs.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ops/op_traits.h"

namespace fusor {

struct NormalizedNode {
  std::vector<Attribute> attrs;
  std::vector<ValueId> inputs;  // kNoValue: absent optional input
  const Attribute* attr(std::string_view name) const {
    for (const auto& a : attrs)
      if (a.name == name) return &a;
    return nullptr;
  }
};

// The rank node n's `axis`/`axes` attributes count: its input 0's, or its output's for an op whose
// axes name output dimensions (Unsqueeze: OpTraits::axes_of_output); -1 when unknown.
int axes_rank(const Graph& g, NodeId n);

// Makes `axis`/`axes` non-negative for rank `rank` (no-op when rank < 0).
void normalize_axis_attr(Attribute& a, int rank);

NormalizedNode normalize_node(const Graph& g, NodeId n);

class NormCache {
 public:
  explicit NormCache(const Graph& g) : g_(g) {}
  const NormalizedNode& get(NodeId n);
  void invalidate(NodeId n) {
    if (n < cache_.size()) cache_[n].reset();
  }

 private:
  const Graph& g_;
  std::vector<std::unique_ptr<NormalizedNode>> cache_;
};

}  // namespace fusor
