#include "engine/rewrite/kernel_gate.h"

#include <algorithm>

#include "engine/rewrite/graph_util.h"
#include "engine/rewrite/predicate.h"

namespace fusor {

namespace {

// The node's facts a condition reads, as the condition names them, in reading order:
// "activation = Sigmoid, input_rank = 4" (for the message saying why no declaration covers it).
void facts(const Expr& e, const Match& m, MatchEnv& env, std::vector<std::pair<std::string, std::string>>& out) {
  std::string name;
  if (e.op == Expr::Op::AttrRead && e.var == KernelTable::kNodeVar) name = e.name;
  if (e.op == Expr::Op::DType && e.var == KernelTable::kInputVar) name = "input_dtype";
  if (e.op == Expr::Op::Rank && e.var == KernelTable::kInputVar) name = "input_rank";
  if (!name.empty()) {
    bool seen = false;
    for (const auto& f : out) seen |= f.first == name;
    if (!seen) {
      static const Pattern kNoPattern;
      PValue v = eval_expr(e, kNoPattern, m, env);
      out.push_back({name, v.kind == PValue::Kind::Str ? "\"" + v.str + "\"" : v.repr()});
    }
  }
  for (const Expr& k : e.kids) facts(k, m, env, out);
}

}  // namespace

std::string KernelGate::cannot_run(MatchEnv& env, NodeId n) const {
  if (!restricts()) return "";
  const Node& node = env.graph.node(n);
  const std::string op = node.op.qualified();
  std::vector<const KernelEntry*> decls = table_.for_op(node.op);
  if (decls.empty()) return "provider '" + table_.provider + "' has no kernel for " + op;
  env.norm.invalidate(n);  // a new node may reuse the id of one normalized before
  // The condition's vars: the node's first output and its first input.
  Match m;
  m.vars = {node.outputs.empty() ? kNoValue : node.outputs[0], node.inputs.empty() ? kNoValue : node.inputs[0]};
  m.bound = {1, 1};
  static const Pattern kNoPattern;
  std::vector<std::pair<std::string, std::string>> read;
  std::string declared;
  for (const KernelEntry* d : decls) {
    if (!d->when) return "";
    if (eval_predicate(*d->when, kNoPattern, m, env)) return "";
    facts(*d->when, m, env, read);
    declared += (declared.empty() ? "" : "; ") + op + " where " + d->when_text + " at " + d->location;
  }
  std::string seen;
  for (const auto& [name, value] : read) seen += (seen.empty() ? "" : ", ") + name + " = " + value;
  return "provider '" + table_.provider + "' has no kernel for " + op + (seen.empty() ? "" : " with " + seen) +
         " (its kernels: " + declared + ")";
}

std::vector<NodeId> KernelGate::runtime_nodes(const Graph& g, const std::vector<NodeId>& nodes) {
  std::vector<NodeId> runtime;
  std::vector<NodeId> folded;  // new nodes computed from constants only
  for (NodeId n : nodes) {
    bool constant_only = true;
    for (ValueId in : g.node(n).inputs) {
      if (in == kNoValue || constant_of(g, in)) continue;
      NodeId p = g.value(in).producer;
      if (p != kNoNode && std::find(folded.begin(), folded.end(), p) != folded.end()) continue;
      constant_only = false;
    }
    (constant_only ? folded : runtime).push_back(n);
  }
  return runtime;
}

}  // namespace fusor
