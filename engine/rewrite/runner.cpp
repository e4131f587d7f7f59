#include "engine/rewrite/runner.h"

#include <algorithm>
#include <deque>
#include <set>

#include "engine/ir/error.h"
#include "engine/onnx/onnx_io.h"
#include "engine/rewrite/apply.h"
#include "engine/rewrite/passes.h"

namespace fusor {

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::Saturated: return "saturated";
    case StopReason::IterationLimit: return "iteration limit";
    case StopReason::Cycle: return "cycle";
  }
  return "?";
}

std::string TraceRecord::str() const {
  std::string s = rule + " (" + location + "):";
  for (size_t i = 0; i < nodes.size(); ++i) s += (i ? ", " : " ") + nodes[i];
  return s;
}

namespace {

struct LimitHit {
  StopReason reason;
  std::string message;
};

class Runner {
 public:
  Runner(const std::vector<Rule>& rules, const RewriteOptions& opts, int64_t opset, RewriteReport& rep)
      : opts_(opts), opset_(opset), rep_(rep) {
    disabled_.insert(opts.disabled.begin(), opts.disabled.end());
    for (size_t i = 0; i < rules.size(); ++i) {
      if (disabled_.count(rules[i].name)) continue;
      compiled_.push_back(compile_rule(rules[i], static_cast<int>(i)));
    }
    // Dispatch table by root op id; each list best first.
    for (size_t c = 0; c < compiled_.size(); ++c) {
      const Pattern& p = compiled_[c].rule->pattern;
      for (OpType op : p.nodes[p.root].ops) {
        if (op.id() >= by_op_.size()) by_op_.resize(op.id() + 1);
        auto& list = by_op_[op.id()];
        if (std::find(list.begin(), list.end(), static_cast<int>(c)) == list.end()) list.push_back(static_cast<int>(c));
      }
    }
    for (auto& list : by_op_)
      std::sort(list.begin(), list.end(), [&](int a, int b) {
        const Rule& ra = *compiled_[a].rule;
        const Rule& rb = *compiled_[b].rule;
        if (ra.effective_benefit() != rb.effective_benefit()) return ra.effective_benefit() > rb.effective_benefit();
        if (compiled_[a].index != compiled_[b].index) return compiled_[a].index < compiled_[b].index;
        return ra.name < rb.name;
      });
  }

  void run_graph(Graph& g, size_t total_nodes) {
    if (max_rewrites_ == 0)
      max_rewrites_ = opts_.max_rewrites ? opts_.max_rewrites : std::max<size_t>(10000, 20 * total_nodes);
    // Subgraphs first.
    for (NodeId n : g.order())
      for (Graph* sg : g.subgraphs(n)) run_graph(*sg, total_nodes);

    NormCache norm(g);
    MatchEnv env{g, norm, opset_};
    RewriteState state;
    InitializerDedup dedup(g);
    std::deque<NodeId> queue;
    std::vector<uint8_t> queued;
    auto push = [&](NodeId n) {
      if (n >= g.node_capacity() || !g.node(n).alive) return;
      if (n >= queued.size()) queued.resize(g.node_capacity(), 0);
      norm.invalidate(n);
      if (queued[n]) return;
      queued[n] = 1;
      queue.push_back(n);
    };
    auto push_all = [&](const std::vector<NodeId>& ns) {
      for (NodeId n : ns) push(n);
    };
    if (!disabled_.count(kInitializerDedup)) {
      std::vector<NodeId> touched;
      int merged = dedup.run_all(touched);
      if (merged) count_pass(kInitializerDedup, g, {}, merged);
    }
    for (NodeId n : g.order()) push(n);
    FoldOptions fold{opts_.fold_max_bytes, opset_};
    bool do_dead = !disabled_.count(kDeadCode), do_fold = !disabled_.count(kConstantFolding),
         do_cse = !disabled_.count(kCse), do_dedup = !disabled_.count(kInitializerDedup);
    while (!queue.empty()) {
      NodeId n = queue.front();
      queue.pop_front();
      queued[n] = 0;
      if (!g.node(n).alive) continue;
      ++rep_.nodes_visited;
      std::vector<NodeId> touched;
      std::string name = g.node(n).name;
      if (do_dead && dead_code_pass(g, n, touched)) {
        count_pass(kDeadCode, g, {name});
        push_all(touched);
        continue;
      }
      if (do_fold) {
        std::vector<ValueId> outs = g.node(n).outputs;
        if (constant_folding_pass(g, n, fold, touched)) {
          count_pass(kConstantFolding, g, {name});
          if (do_dedup)
            for (ValueId o : outs)
              if (o != kNoValue && g.value(o).alive && dedup.add(o, touched)) count_pass(kInitializerDedup, g, {});
          push_all(touched);
          continue;
        }
      }
      if (do_cse && cse_pass(g, n, touched)) {
        count_pass(kCse, g, {name});
        push_all(touched);
        continue;
      }
      try_rules(g, env, state, dedup, n, push_all);
    }
  }

 private:
  template <typename Push>
  void try_rules(Graph& g, MatchEnv& env, RewriteState& state, InitializerDedup& dedup, NodeId n, Push& push_all) {
    OpType op = g.node(n).op;
    if (op.id() >= by_op_.size()) return;
    for (int c : by_op_[op.id()]) {
      const CompiledRule& cr = compiled_[c];
      const Rule& r = *cr.rule;
      bool explain = !opts_.explain_rule.empty() && r.name == opts_.explain_rule;
      NearMiss miss;
      Match m;
      size_t before = env.attempts;
      bool ok = match_rule(cr, env, n, m, explain ? &miss : nullptr);
      rep_.match_attempts += env.attempts - before;
      if (!ok) {
        if (explain) record_explain(g, n, false, false, miss.reason);
        continue;
      }
      ApplyResult res = apply_rewrite(g, cr, m, env, state);
      if (explain) record_explain(g, n, true, res.changed, res.refused);
      if (!res.changed) continue;
      ++rep_.rewrites;
      ++rep_.rules_fired[r.name];
      remember(r.name, res.depth);
      if (opts_.trace) rep_.trace.push_back({r.name, r.location(), res.matched, g.name});
      std::vector<NodeId> touched = res.touched;
      touched.insert(touched.end(), res.new_nodes.begin(), res.new_nodes.end());
      if (!disabled_.count(kInitializerDedup))
        for (NodeId nn : res.new_nodes)
          for (ValueId in : g.node(nn).inputs)
            if (in != kNoValue && g.value(in).is_constant_initializer() && dedup.add(in, touched))
              count_pass(kInitializerDedup, g, {});
      push_all(touched);
      check_limits(res.depth);
      return;
    }
  }

  void record_explain(Graph& g, NodeId n, bool matched, bool applied, const std::string& reason) {
    const Node& node = g.node(n);
    for (auto& e : rep_.explain)
      if (e.root == node.name && e.op == node.op.qualified()) {
        e = {node.name, node.op.qualified(), matched, applied, reason};
        return;
      }
    rep_.explain.push_back({node.name, node.op.qualified(), matched, applied, reason});
  }

  void count_pass(const char* pass, Graph& g, std::vector<std::string> nodes, int times = 1) {
    rep_.rules_fired[pass] += times;
    rep_.rewrites += times;
    if (opts_.trace) rep_.trace.push_back({pass, "built-in", std::move(nodes), g.name});
  }

  void remember(const std::string& rule, int depth) {
    recent_.push_back({rule, depth});
    if (recent_.size() > 256) recent_.pop_front();
  }

  std::string rules_involved(int min_depth) const {
    std::set<std::string> names;
    for (const auto& [name, d] : recent_)
      if (d >= min_depth) names.insert(name);
    std::string s;
    for (const auto& nm : names) s += (s.empty() ? "" : ", ") + nm;
    return s;
  }

  void check_limits(int depth) {
    if (depth > opts_.max_depth) {
      throw LimitHit{StopReason::Cycle, "rewriting does not terminate: rules " + rules_involved(opts_.max_depth / 2) +
                                            " keep rewriting each other's results (rewrite depth " +
                                            std::to_string(depth) + " on one spot)"};
    }
    if (rep_.rewrites > max_rewrites_) {
      throw LimitHit{StopReason::IterationLimit, "rewriting did not reach a fixed point after " +
                                                     std::to_string(max_rewrites_) + " rewrites; rules still firing: " +
                                                     rules_involved(0)};
    }
  }

  const RewriteOptions& opts_;
  int64_t opset_;
  RewriteReport& rep_;
  std::set<std::string> disabled_;
  std::vector<CompiledRule> compiled_;
  std::vector<std::vector<int>> by_op_;
  std::deque<std::pair<std::string, int>> recent_;
  size_t max_rewrites_ = 0;
};

size_t count_nodes(const Graph& g) {
  size_t n = g.num_nodes();
  for (NodeId id : g.order())
    for (Graph* sg : g.subgraphs(id)) n += count_nodes(*sg);
  return n;
}

}  // namespace

RewriteReport run_rewrites(Graph& graph, const std::vector<Rule>& rules, const RewriteOptions& opts, int64_t opset) {
  RewriteReport rep;
  Runner runner(rules, opts, opset, rep);
  try {
    runner.run_graph(graph, count_nodes(graph));
  } catch (const LimitHit& hit) {
    rep.stop = hit.reason;
    rep.stop_message = hit.message;
    if (opts.throw_on_limit) throw_bad_input(hit.message);
  }
  return rep;
}

RewriteReport run_rewrites(Model& model, const std::vector<Rule>& rules, const RewriteOptions& opts) {
  RewriteReport rep = run_rewrites(*model.graph, rules, opts, model.opset(""));
  if (opts.reinfer_shapes && rep.rewrites > 0) infer_shapes(model);
  return rep;
}

}  // namespace fusor
