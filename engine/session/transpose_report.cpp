#include "engine/session/transpose_report.h"
#include "core/ops/op_names.h"

namespace fusor {

namespace {

bool is_transpose(const Node& n) { return n.op == op::Transpose; }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string why_left(const Graph& g, const Node& t) {
  const Value& out = g.value(t.outputs.at(0));
  if (out.is_graph_output) return "feeds graph output '" + out.name + "'";
  std::string blockers;
  for (const Use& u : out.uses) {
    const Node& c = g.node(u.node);
    blockers += (blockers.empty() ? "" : ", ") + c.op.name() + " ('" + c.name + "')";
  }
  if (blockers.empty()) return "unused";
  const Value& in = g.value(t.inputs.at(0));
  if (in.producer == kNoNode) return "converts graph input '" + in.name + "' for " + blockers;
  return "blocked by " + blockers;
}

}  // namespace

int64_t count_transposes(const Model& model) {
  int64_t n = 0;
  for (NodeId id = model.graph->first(); id != kNoNode; id = model.graph->next(id)) n += is_transpose(model.graph->node(id));
  return n;
}

TransposeReport transpose_report(const Model& after, int64_t before, const std::map<std::string, int64_t>& rules_fired) {
  TransposeReport r;
  r.before = before;
  for (const auto& [rule, times] : rules_fired)
    if (ends_with(rule, "_to_nhwc")) r.inserted += 2 * times;
  const Graph& g = *after.graph;
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id)) {
    const Node& n = g.node(id);
    if (!is_transpose(n)) continue;
    ++r.left;
    r.details.push_back({n.name, why_left(g, n)});
  }
  r.cancelled = r.before + r.inserted - r.left;
  return r;
}

}  // namespace fusor
