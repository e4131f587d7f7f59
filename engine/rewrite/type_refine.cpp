#include "engine/rewrite/type_refine.h"

#include "engine/rewrite/infer.h"
#include "core/ops/op_names.h"

namespace fusor {

static bool dim_unknown(const Dim& d) { return !d.is_known() && d.param.empty(); }

bool types_incomplete(const Graph& g, NodeId n) {
  for (ValueId o : g.node(n).outputs) {
    if (o == kNoValue) continue;
    const ValueType& t = g.value(o).type;
    if (!t.is_tensor()) continue;
    if (t.elem == DataType::Undefined || !t.has_shape) return true;
    for (const Dim& d : t.dims)
      if (dim_unknown(d)) return true;
  }
  return false;
}

bool merge_type(const ValueType& old, const ValueType& better, ValueType& merged) {
  merged = old;
  if (!old.is_tensor() || !better.is_tensor()) return false;
  bool gained = false;
  if (better.elem != DataType::Undefined) {
    if (old.elem == DataType::Undefined) {
      merged.elem = better.elem;
      gained = true;
    } else if (old.elem != better.elem) {
      merged = old;
      return false;
    }
  }
  if (!better.has_shape) return gained;
  if (!old.has_shape) {
    merged.has_shape = true;
    merged.dims = better.dims;
    return true;
  }
  if (old.dims.size() != better.dims.size()) {
    merged = old;
    return false;
  }
  for (size_t i = 0; i < old.dims.size(); ++i) {
    const Dim &o = old.dims[i], &b = better.dims[i];
    if (o.is_known()) {
      if (b.is_known() && b.value != o.value) {
        merged = old;
        return false;
      }
      continue;
    }
    if (b.is_known() || (dim_unknown(o) && !b.param.empty())) {
      merged.dims[i] = b;
      gained = true;
    }
  }
  return gained;
}

// ONNX's Reshape inference gives no rank when the shape input is computed at run time (torch's
// exports with dynamic axes: Concat of Unsqueezed Gathers of Shape), though the shape input's own
// length is the output's rank.
static void reshape_rank_from_shape_length(Graph& g, NodeId n) {
  const Node& node = g.node(n);
  if (node.op != op::Reshape || node.inputs.size() < 2 || node.inputs[1] == kNoValue ||
      node.outputs.empty() || node.outputs[0] == kNoValue)
    return;
  const ValueType& shape = g.value(node.inputs[1]).type;
  ValueType& out = g.value(node.outputs[0]).type;
  if (out.has_shape || shape.rank() != 1 || !shape.dims[0].is_known()) return;
  out.has_shape = true;
  out.dims.assign(static_cast<size_t>(shape.dims[0].value), Dim{});
}

bool refine_node_types(Graph& g, NodeId n, int64_t opset, std::vector<NodeId>& consumers) {
  if (!types_incomplete(g, n) || !g.subgraphs(n).empty()) return false;
  const std::vector<ValueId> outs = g.node(n).outputs;
  std::vector<ValueType> before;
  for (ValueId o : outs) before.push_back(o == kNoValue ? ValueType{} : g.value(o).type);
  infer_node_types(g, n, opset);
  reshape_rank_from_shape_length(g, n);
  bool any = false;
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i] == kNoValue) continue;
    Value& v = g.value(outs[i]);
    ValueType merged;
    const bool gained = merge_type(before[i], v.type, merged);
    v.type = merged;  // also restores what a weaker inference would have dropped
    if (!gained) continue;
    any = true;
    for (const Use& u : v.uses) consumers.push_back(u.node);
  }
  return any;
}

}  // namespace fusor
