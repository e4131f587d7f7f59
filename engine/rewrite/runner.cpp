#include "engine/rewrite/runner.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "core/util/error.h"
#include "engine/rewrite/operand_filter.h"
#include "engine/rewrite/type_refine.h"
#include "core/onnx/onnx_io.h"
#include "engine/rewrite/apply.h"
#include "engine/rewrite/graph_util.h"
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

// Nodes on the longest path from the pattern's root down its inputs (1 for a single node).
int pattern_depth(const Pattern& p) {
  std::vector<int> depth(p.nodes.size(), 0);
  // Pattern nodes feed the root through inputs; a node's depth is one more than its consumer's.
  std::vector<int> stack = {p.root};
  depth[p.root] = 1;
  int deepest = 1;
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    for (const PInput& in : p.nodes[n].inputs) {
      if (in.kind != PInput::Kind::Var && in.kind != PInput::Kind::Tail) continue;
      int q = p.vars[in.var].producer;
      if (q < 0 || depth[q] >= depth[n] + 1 || depth[n] + 1 > static_cast<int>(p.nodes.size())) continue;
      depth[q] = depth[n] + 1;
      deepest = std::max(deepest, depth[q]);
      stack.push_back(q);
    }
  }
  return deepest;
}

class Runner {
 public:
  Runner(const std::vector<Rule>& rules, const RewriteOptions& opts, int64_t opset, RewriteReport& rep)
      : opts_(opts), opset_(opset), rep_(rep) {
    disabled_.insert(opts.disabled.begin(), opts.disabled.end());
    for (size_t i = 0; i < rules.size(); ++i) {
      if (disabled_.count(rules[i].name)) continue;
      compiled_.push_back(compile_rule(rules[i], static_cast<int>(i)));
      filters_.emplace_back(rules[i].pattern);
      int body = 0;  // rules lowered from one declaration share its name
      for (size_t j = 0; j < i; ++j) body += rules[j].name == rules[i].name ? 1 : 0;
      body_.push_back(body);
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
    for (const CompiledRule& cr : compiled_) reach_ = std::max(reach_, pattern_depth(cr.rule->pattern) - 1);
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
      for (Graph* sg : g.subgraphs(n)) {
        run_graph(*sg, total_nodes);
        prune_unused_captures(g, n, *sg);
      }

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
    // A change at n (a new node, an input that became constant) can complete a match rooted up
    // to reach_ nodes downstream of n (a constant weight two ops below an Add root), and that
    // root may have been visited already: re-queue n, and its consumers to that depth that are
    // the root op of some rule (nothing else changed for them).
    std::vector<NodeId> frontier, next;
    auto push_all = [&](const std::vector<NodeId>& ns) {
      for (NodeId n : ns) {
        push(n);
        frontier.assign(1, n);
        for (int level = 0; level < reach_ && !frontier.empty(); ++level) {
          next.clear();
          for (NodeId f : frontier) {
            if (f >= g.node_capacity() || !g.node(f).alive) continue;
            for (ValueId o : g.node(f).outputs)
              if (o != kNoValue)
                for (const Use& u : g.value(o).uses) {
                  if (is_root_op(g.node(u.node).op)) push(u.node);
                  next.push_back(u.node);
                }
          }
          frontier.swap(next);
        }
      }
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
      // Outputs whose types folding upstream made inferable: consumers may match rules now.
      std::vector<NodeId> refined;
      if (refine_node_types(g, n, opset_, refined)) push_all(refined);
      try_rules(g, env, state, dedup, n, push_all);
    }
  }

 private:
  // The arithmetic a rewrite writes on constants (folded weights, filter sums) is folded right
  // away, in creation order (inputs before consumers), so no rule sees it half folded: a MatMul
  // that sums filters is not a product to fuse into a FusedMatMul.
  void fold_new_constants(Graph& g, InitializerDedup& dedup, const std::vector<NodeId>& created,
                          std::vector<NodeId>& touched) {
    if (disabled_.count(kConstantFolding)) return;
    const FoldOptions fold{opts_.fold_max_bytes, opset_};
    for (NodeId nn : created) {
      if (!g.node(nn).alive) continue;
      std::string name = g.node(nn).name;
      std::vector<ValueId> outs = g.node(nn).outputs;
      if (!constant_folding_pass(g, nn, fold, touched)) continue;
      count_pass(kConstantFolding, g, {name});
      if (!disabled_.count(kInitializerDedup))
        for (ValueId o : outs)
          if (o != kNoValue && g.value(o).alive && dedup.add(o, touched)) count_pass(kInitializerDedup, g, {});
    }
  }

  bool is_root_op(OpType op) const { return op.id() < by_op_.size() && !by_op_[op.id()].empty(); }

  template <typename Push>
  void try_rules(Graph& g, MatchEnv& env, RewriteState& state, InitializerDedup& dedup, NodeId n, Push& push_all) {
    OpType op = g.node(n).op;
    if (op.id() >= by_op_.size()) return;
    const bool explaining = !opts_.explain_rule.empty();
    const std::vector<int>& candidates = by_op_[op.id()];
    if (candidates.empty()) return;
    operand_ops(g, g.node(n), operand_ops_);  // read once, tested by every candidate's prefilter
    for (size_t ci = 0; ci < candidates.size(); ++ci) {
      int c = candidates[ci];
      const CompiledRule& cr = compiled_[c];
      const Rule& r = *cr.rule;
      bool explain = explaining && r.name == opts_.explain_rule;
      // The explained rule skips the prefilter: its near misses must say which check failed.
      if (!explain && !filters_[c].may_match(operand_ops_)) continue;
      NearMiss miss;
      Match m;
      size_t before = env.attempts;
      bool ok = match_rule(cr, env, n, m, explain ? &miss : nullptr);
      rep_.match_attempts += env.attempts - before;
      if (!ok) {
        if (explain) record_near_miss(g, n, c, miss);
        continue;
      }
      std::string root_name = g.node(n).name, root_op = g.node(n).op.qualified();
      ApplyResult res = apply_rewrite(g, cr, m, env, state, opts_.gate);
      if (res.skipped) ++rep_.skipped;
      if (!res.changed) {
        if (explain) record_match(g, root_name, root_op, c, res);
        continue;
      }
      ++rep_.rewrites;
      if (explaining) {
        if (explain) record_match(g, root_name, root_op, c, res);
        else note_preempted(g, root_name, root_op, candidates, ci, r.name);
        note_removed(g, res.matched, r.name);
      }
      ++rep_.rules_fired[r.name];
      remember(r.name + " (" + r.location() + ")", res.depth);  // limit messages name FILE:LINE
      if (opts_.trace) rep_.trace.push_back({r.name, r.location(), res.matched, g.name});
      std::vector<NodeId> touched = res.touched;
      touched.insert(touched.end(), res.new_nodes.begin(), res.new_nodes.end());
      if (!disabled_.count(kInitializerDedup))
        for (NodeId nn : res.new_nodes)
          for (ValueId in : g.node(nn).inputs)
            if (in != kNoValue && g.value(in).is_constant_initializer() && dedup.add(in, touched))
              count_pass(kInitializerDedup, g, {});
      fold_new_constants(g, dedup, res.new_nodes, touched);
      push_all(touched);
      check_limits(res.depth);
      return;
    }
  }

  // ---- explain (explain.h): one record per (graph, root), replaced by later outcomes ----
  size_t explain_slot(const Graph& g, const std::string& root) {
    auto [it, fresh] = explain_index_.emplace(g.name + '\n' + root, rep_.explain.size());
    if (fresh) {
      rep_.explain.emplace_back();
      miss_progress_.push_back(-1);
    }
    return it->second;
  }

  ExplainRecord& explain_record(const Graph& g, const std::string& root, const std::string& op, int c) {
    size_t slot = explain_slot(g, root);
    miss_progress_[slot] = -1;
    ExplainRecord& e = rep_.explain[slot];
    e = ExplainRecord{};
    e.root = root;
    e.op = op;
    e.graph = g.name;
    e.location = compiled_[c].rule->location();
    e.body = body_[c];
    e.iteration = rep_.nodes_visited;
    return e;
  }

  void record_near_miss(const Graph& g, NodeId n, int c, const NearMiss& miss) {
    const Node& node = g.node(n);
    // A rule lowered to several bodies (pattern alternatives) is tried body after body at one
    // visit of the node: keep the body whose attempt got furthest.
    size_t slot = explain_slot(g, node.name);
    const ExplainRecord& prev = rep_.explain[slot];
    if (prev.kind == ExplainKind::NearMiss && prev.iteration == rep_.nodes_visited && !prev.root.empty() &&
        miss_progress_[slot] >= miss.progress)
      return;
    ExplainRecord& e = explain_record(g, node.name, node.op.qualified(), c);
    miss_progress_[slot] = miss.progress;
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

  void record_match(const Graph& g, const std::string& root, const std::string& op, int c, const ApplyResult& res) {
    ExplainRecord& e = explain_record(g, root, op, c);
    e.matched = true;
    e.applied = res.changed;
    e.kind = res.changed ? ExplainKind::Applied : res.skipped ? ExplainKind::Skipped : ExplainKind::Refused;
    e.reason = res.refused;
    e.nodes = res.matched;
    if (res.changed) {
      e.rewrite_index = rep_.rewrites;
      for (NodeId nn : res.new_nodes)
        if (g.node(nn).alive) e.new_ops.push_back(g.node(nn).op.qualified());
    }
  }

  // Rule `by` rewrote the node at candidates[ci] before the explained rule, later in the list, was tried.
  void note_preempted(const Graph& g, const std::string& root, const std::string& op, const std::vector<int>& candidates,
                      size_t ci, const std::string& by) {
    for (size_t k = ci + 1; k < candidates.size(); ++k) {
      if (compiled_[candidates[k]].rule->name != opts_.explain_rule) continue;
      ExplainRecord& e = explain_record(g, root, op, candidates[k]);
      e.kind = ExplainKind::Preempted;
      e.by_rule = by;
      e.reason = "rule '" + by + "' (higher priority) rewrote this node first";
      return;
    }
  }

  // Near misses whose root a rewrite removed name what removed it.
  void note_removed(const Graph& g, const std::vector<std::string>& names, const std::string& by) {
    for (const std::string& name : names) {
      auto it = explain_index_.find(g.name + '\n' + name);
      if (it == explain_index_.end()) continue;
      ExplainRecord& e = rep_.explain[it->second];
      if (e.kind == ExplainKind::NearMiss && e.by_rule.empty()) e.by_rule = by;
    }
  }

  void count_pass(const char* pass, Graph& g, std::vector<std::string> nodes, int times = 1) {
    if (!opts_.explain_rule.empty()) note_removed(g, nodes, pass);
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
  std::vector<OperandFilter> filters_;  // parallel to compiled_ (operand_filter.h)
  OperandOps operand_ops_;              // the operand producers of the node being tried
  std::vector<int> body_;  // per compiled rule: its body among rules of the same name
  std::vector<std::vector<int>> by_op_;
  std::map<std::string, size_t> explain_index_;  // graph, root -> rep_.explain index
  std::vector<int> miss_progress_;               // per rep_.explain entry: its near miss's progress
  std::deque<std::pair<std::string, int>> recent_;
  size_t max_rewrites_ = 0;
  int reach_ = 0;  // the deepest pattern's node count from its root to a leaf node, minus one
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
