#include "engine/rewrite/operand_filter.h"

#include <algorithm>

namespace fusor {

void operand_ops(const Graph& g, const Node& n, OperandOps& out) {
  out.clear();
  for (ValueId v : n.inputs) {
    const NodeId p = v == kNoValue ? kNoNode : g.value(v).producer;
    out.push_back(p == kNoNode ? OpType() : g.node(p).op);
  }
}

OperandFilter::OperandFilter(const Pattern& p) {
  if (p.root < 0 || p.root >= static_cast<int>(p.nodes.size())) return;
  for (const PInput& in : p.nodes[p.root].inputs) {
    if (in.kind != PInput::Kind::Var || in.optional || in.var < 0) continue;
    const int producer = p.vars[in.var].producer;
    if (producer < 0) continue;
    required_.push_back(p.nodes[producer].ops);
  }
}

bool OperandFilter::may_match(const OperandOps& ops) const {
  for (const std::vector<OpType>& allowed : required_) {
    const bool found = std::any_of(ops.begin(), ops.end(), [&](OpType o) {
      return std::find(allowed.begin(), allowed.end(), o) != allowed.end();
    });
    if (!found) return false;
  }
  return true;
}

}  // namespace fusor
