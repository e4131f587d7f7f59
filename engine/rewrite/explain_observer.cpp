#include "engine/rewrite/explain_observer.h"

namespace fusor {

void ExplainObserver::begin(const std::vector<CompiledRule>& rules) {
  // Rules lowered from one declaration share its name: number their bodies in list order.
  std::map<std::string, int> seen;
  for (const CompiledRule& c : rules) body_[c.index] = seen[c.rule->name]++;
}

size_t ExplainObserver::slot(const Graph& g, const std::string& root) {
  auto [it, fresh] = index_.emplace(g.name + '\n' + root, records.size());
  if (fresh) {
    records.emplace_back();
    miss_progress_.push_back(-1);
  }
  return it->second;
}

ExplainRecord& ExplainObserver::record(const Graph& g, const RootInfo& root, const CompiledRule& c,
                                       const RunProgress& at) {
  size_t s = slot(g, root.name);
  miss_progress_[s] = -1;
  ExplainRecord& e = records[s];
  e = ExplainRecord{};
  e.root = root.name;
  e.op = root.op;
  e.graph = g.name;
  e.location = c.rule->location();
  e.body = body_[c.index];
  e.iteration = at.nodes_visited;
  return e;
}

void ExplainObserver::near_miss(const Graph& g, const RootInfo& root, const CompiledRule& c, const NearMiss& miss,
                                const RunProgress& at) {
  // A rule lowered to several bodies (pattern alternatives) is tried body after body at one visit
  // of the node: keep the body whose attempt got furthest.
  size_t s = slot(g, root.name);
  const ExplainRecord& prev = records[s];
  if (prev.kind == ExplainKind::NearMiss && prev.iteration == at.nodes_visited && !prev.root.empty() &&
      miss_progress_[s] >= miss.progress)
    return;
  ExplainRecord& e = record(g, root, c, at);
  miss_progress_[s] = miss.progress;
  e.kind = ExplainKind::NearMiss;
  e.reason = miss.reason;
  e.constraint = miss.kind;
  if (miss.node != kNoNode) {
    e.at_node = g.node(miss.node).name;
    e.at_op = g.node(miss.node).op.qualified();
  }
  e.at_input = miss.input;
  if (miss.consumer != kNoNode) {
    e.consumer = g.node(miss.consumer).name;
    e.consumer_input = miss.consumer_input;
  }
}

void ExplainObserver::matched(const Graph& g, const RootInfo& root, const CompiledRule& c, const ApplyResult& res,
                              const std::vector<const CompiledRule*>& later, const RunProgress& at) {
  const bool mine = c.rule->name == rule_;
  if (mine) {
    ExplainRecord& e = record(g, root, c, at);
    e.matched = true;
    e.applied = res.changed;
    e.kind = res.changed ? ExplainKind::Applied : res.skipped ? ExplainKind::Skipped : ExplainKind::Refused;
    e.reason = res.refused;
    e.nodes = res.matched;
    if (res.changed) {
      e.rewrite_index = at.rewrites;
      for (NodeId nn : res.new_nodes)
        if (g.node(nn).alive) e.new_ops.push_back(g.node(nn).op.qualified());
    }
  }
  if (!res.changed) return;
  if (!mine) {
    // The explained rule, later in the list for this op, was not tried at this node.
    for (const CompiledRule* l : later) {
      if (l->rule->name != rule_) continue;
      ExplainRecord& e = record(g, root, *l, at);
      e.kind = ExplainKind::Preempted;
      e.by_rule = c.rule->name;
      e.reason = "rule '" + c.rule->name + "' (higher priority) rewrote this node first";
      break;
    }
  }
  note_removed(g, res.matched, c.rule->name);
}

void ExplainObserver::pass_fired(const Graph& g, const char* pass, const std::vector<std::string>& nodes, int,
                                 const RunProgress&) {
  note_removed(g, nodes, pass);
}

// Near misses whose root a change removed name what removed it.
void ExplainObserver::note_removed(const Graph& g, const std::vector<std::string>& names, const std::string& by) {
  for (const std::string& name : names) {
    auto it = index_.find(g.name + '\n' + name);
    if (it == index_.end()) continue;
    ExplainRecord& e = records[it->second];
    if (e.kind == ExplainKind::NearMiss && e.by_rule.empty()) e.by_rule = by;
  }
}

}  // namespace fusor
