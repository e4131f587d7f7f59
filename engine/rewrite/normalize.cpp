#include "engine/rewrite/normalize.h"

#include <algorithm>

#include "core/ops/op_names.h"
#include "core/ops/op_traits.h"
#include "engine/rewrite/graph_util.h"

namespace fusor {

int axes_rank(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  const std::vector<ValueId>& side = op_traits(n.op).axes_of_output ? n.outputs : n.inputs;
  return !side.empty() && side[0] != kNoValue ? g.value(side[0]).type.rank() : -1;
}

// Spatial axes of a windowed op's input of rank `in_rank`: the blocked (NCHWc) ops are 2-D, their
// input rank 5 (or 4 for NchwcConv's plain input), as is WinogradConv's (rank 4, or 5 blocked);
// the others have N, C and the spatial axes.
static int spatial_rank(OpType op, int in_rank) {
  const bool two_d = op.domain() == kFusorDomain && (op.name().rfind("Nchwc", 0) == 0 || op.name() == "WinogradConv");
  return two_d ? 2 : in_rank - 2;
}

void normalize_axis_attr(Attribute& a, int rank) {
  if (rank < 0) return;
  if (a.name == "axis" && a.kind == AttrKind::Int && a.i < 0 && a.i >= -rank) a.i += rank;
  if (a.name == "axes" && a.kind == AttrKind::Ints)
    for (int64_t& x : a.ints)
      if (x < 0 && x >= -rank) x += rank;
}

NormalizedNode normalize_node(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  NormalizedNode out;
  out.attrs = n.attrs;
  out.inputs = n.inputs;
  // Lift constant inputs spelled as attributes in the normal form.
  for (size_t slot = 1; slot < out.inputs.size(); ++slot) {
    auto name = lifted_input_attr(n.op, slot);
    if (!name || out.inputs[slot] == kNoValue) continue;
    TensorPtr t = constant_of(g, out.inputs[slot]);
    if (!t) continue;
    Attribute a;
    if (*name == "axes") {
      a = Attribute::make_ints(*name, t->to_int64_vector());
    } else {
      if (t->numel() != 1) continue;
      a = Attribute::make_float(*name, static_cast<float>(t->as_double(0)));
    }
    out.attrs.erase(std::remove_if(out.attrs.begin(), out.attrs.end(), [&](const Attribute& x) { return x.name == *name; }),
                    out.attrs.end());
    out.attrs.push_back(std::move(a));
    out.inputs[slot] = kNoValue;
  }
  // Lifted slots that were removed leave holes; only trailing holes can be dropped safely, and a
  // hole before a kept input stays an absent input.
  while (!out.inputs.empty() && out.inputs.back() == kNoValue) out.inputs.pop_back();

  int in_rank = !n.inputs.empty() && n.inputs[0] != kNoValue ? g.value(n.inputs[0]).type.rank() : -1;
  const int rank = axes_rank(g, id);
  for (Attribute& a : out.attrs) normalize_axis_attr(a, rank);
  if (n.op == op::Transpose && !n.attr("perm") && in_rank >= 0) {
    std::vector<int64_t> perm(in_rank);
    for (int i = 0; i < in_rank; ++i) perm[i] = in_rank - 1 - i;
    out.attrs.push_back(Attribute::make_ints("perm", perm));
  }
  // Omitted `pads` of the windowed ops are zeros (ONNX gives them no schema default): made
  // explicit, so a rule can add to them (a Pad folded into a Conv) whether or not the exporter
  // wrote them. Not with auto_pad SAME_* / VALID, which computes its own.
  if (op_traits(n.op).windowed && in_rank >= 3 && !n.attr("pads")) {
    const Attribute* ap = n.attr("auto_pad");
    if (!ap || (ap->kind == AttrKind::String && ap->s == "NOTSET"))
      out.attrs.push_back(Attribute::make_ints("pads", std::vector<int64_t>(2 * spatial_rank(n.op, in_rank), 0)));
  }
  // Omitted `strides` and `dilations` are ones along each spatial axis (ONNX's words, again no
  // schema default), for the ops that have them: `c.strides == [1, 1]` holds for an exporter
  // that leaves them out.
  if (op_traits(n.op).windowed && in_rank >= 3)
    for (const char* name : {"strides", "dilations"})
      if (!n.attr(name) && onnx_attr_kind(n.op, name) == AttrKind::Ints)
        out.attrs.push_back(Attribute::make_ints(name, std::vector<int64_t>(spatial_rank(n.op, in_rank), 1)));
  // Sorted by name, so `a.attrs`, <...c> and CSE see one order.
  std::stable_sort(out.attrs.begin(), out.attrs.end(), [](const Attribute& a, const Attribute& b) { return a.name < b.name; });
  return out;
}

const NormalizedNode& NormCache::get(NodeId n) {
  if (n >= cache_.size()) cache_.resize(g_.node_capacity());
  if (!cache_[n]) cache_[n] = std::make_unique<NormalizedNode>(normalize_node(g_, n));
  return *cache_[n];
}

}  // namespace fusor
