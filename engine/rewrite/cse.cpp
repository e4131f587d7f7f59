#include "engine/rewrite/passes.h"

#include "engine/rewrite/graph_util.h"
#include "core/ops/op_traits.h"

namespace fusor {

static bool same_attrs(const Node& a, const Node& b) {
  if (a.attrs.size() != b.attrs.size()) return false;
  for (const Attribute& x : a.attrs) {
    if (x.kind == AttrKind::Graph || x.kind == AttrKind::Graphs) return false;
    const Attribute* y = b.attr(x.name);
    if (!y || y->kind != x.kind) return false;
    // Exact equality here (attr_equal has a tolerance meant for patterns).
    switch (x.kind) {
      case AttrKind::Int: if (x.i != y->i) return false; break;
      case AttrKind::Float: if (x.f != y->f) return false; break;
      case AttrKind::Floats: if (x.floats != y->floats) return false; break;
      default: if (!attr_equal(x, *y)) return false;
    }
  }
  return true;
}

bool cse_pass(Graph& g, NodeId id, std::vector<NodeId>& touched) {
  const Node& n = g.node(id);
  if (n.inputs.empty() || n.inputs[0] == kNoValue || !op_traits(n.op).deterministic || !g.subgraphs(id).empty())
    return false;
  for (ValueId o : n.outputs)
    if (o != kNoValue && g.value(o).is_graph_output) return false;
  // Candidates: other consumers of input 0, in use-list order (deterministic).
  std::vector<Use> uses = g.value(n.inputs[0]).uses;
  for (const Use& u : uses) {
    if (u.node == id || u.slot != 0) continue;
    const Node& m = g.node(u.node);
    if (m.op != n.op || m.inputs != n.inputs || m.outputs.size() != n.outputs.size() || !same_attrs(n, m) ||
        !g.subgraphs(u.node).empty())
      continue;
    bool outputs_ok = true;
    for (size_t i = 0; i < n.outputs.size(); ++i)
      outputs_ok &= (n.outputs[i] == kNoValue) || m.outputs[i] != kNoValue;
    if (!outputs_ok) continue;
    // m survives; it moves to n's place when n comes first, so every use of n's outputs still
    // follows its producer. (m's inputs are n's, so they precede n.)
    // Walk both directions at once: cost proportional to the distance between the two.
    bool n_first = false;
    for (NodeId fwd = g.next(id), back = g.node(id).prev; fwd != kNoNode || back != kNoNode;) {
      if (fwd == u.node) { n_first = true; break; }
      if (back == u.node) break;
      if (fwd != kNoNode) fwd = g.next(fwd);
      if (back != kNoNode) back = g.node(back).prev;
    }
    if (n_first) g.move_before(u.node, id);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] == kNoValue) continue;
      for (const Use& c : g.value(n.outputs[i]).uses) touched.push_back(c.node);
      g.replace_all_uses(n.outputs[i], m.outputs[i]);
    }
    touched.push_back(u.node);
    g.remove_node(id);
    return true;
  }
  return false;
}

}  // namespace fusor
