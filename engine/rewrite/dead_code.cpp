#include "engine/rewrite/passes.h"

namespace fusor {

bool dead_code_pass(Graph& g, NodeId id, std::vector<NodeId>& touched) {
  const Node& n = g.node(id);
  for (ValueId o : n.outputs)
    if (o != kNoValue && (!g.value(o).uses.empty() || g.value(o).is_graph_output)) return false;
  std::vector<ValueId> inputs = n.inputs;
  inputs.insert(inputs.end(), n.implicit_inputs.begin(), n.implicit_inputs.end());
  g.remove_node(id);
  for (ValueId v : inputs) {
    if (v == kNoValue || !g.value(v).alive) continue;
    if (g.value(v).producer != kNoNode) touched.push_back(g.value(v).producer);
    // Initializers no one uses any more go with the node.
    const Value& val = g.value(v);
    if (val.constant && val.uses.empty() && !val.is_graph_input && !val.is_graph_output) g.remove_value(v);
  }
  return true;
}

}  // namespace fusor
