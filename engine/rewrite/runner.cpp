#include "engine/rewrite/runner.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "engine/rewrite/operand_filter.h"
#include "engine/rewrite/type_refine.h"
#include "core/onnx/onnx_io.h"
#include "engine/rewrite/apply.h"
#include "engine/rewrite/graph_util.h"
#include "engine/rewrite/explain_observer.h"
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

namespace {

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
  Runner(const std::vector<Rule>& rules, const RewriteOptions& opts, int64_t opset, RewriteReport& rep,
         const std::vector<RewriteObserver*>& observers)
      : opts_(opts), opset_(opset), rep_(rep), observers_(observers) {
    disabled_.insert(opts.disabled.begin(), opts.disabled.end());
    for (size_t i = 0; i < rules.size(); ++i) {
      if (disabled_.count(rules[i].name)) continue;
      compiled_.push_back(compile_rule(rules[i], static_cast<int>(i)));
      filters_.emplace_back(rules[i].pattern);
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
    for (const char* pass : {kDeadCode, kConstantFolding, kCse, kInitializerDedup})
      if (!disabled_.count(pass)) enabled_.insert(pass);
    for (const NodePass& p : kNodePasses)
      if (enabled_.count(p.name)) passes_.push_back(&p);
    for (size_t c = 0; c < compiled_.size(); ++c)
      for (RewriteObserver* o : observers_)
        if (o->wants_near_misses(*compiled_[c].rule)) described_.insert(static_cast<int>(c));
    for (RewriteObserver* o : observers_) o->begin(compiled_);
  }

  bool stopped() const { return rep_.stop != StopReason::Saturated; }

  void run_graph(Graph& g, size_t total_nodes) {
    if (max_rewrites_ == 0)
      max_rewrites_ = opts_.max_rewrites ? opts_.max_rewrites : std::max<size_t>(10000, 20 * total_nodes);
    // Subgraphs first.
    for (NodeId n : g.order())
      for (Graph* sg : g.subgraphs(n)) {
        run_graph(*sg, total_nodes);
        prune_unused_captures(g, n, *sg);
        if (stopped()) return;
      }

    NormCache norm(g);
    MatchEnv env{g, norm, opset_};
    RewriteState state;
    InitializerDedup dedup(g);
    GraphRun run{g, env, state, dedup, {}, {}};
    if (enabled(kInitializerDedup)) {
      std::vector<NodeId> touched;
      int merged = dedup.run_all(touched);
      if (merged) count_pass(kInitializerDedup, g, {}, merged);
    }
    for (NodeId n : g.order()) push(run, n);
    while (!run.queue.empty() && !stopped()) {
      NodeId n = run.queue.front();
      run.queue.pop_front();
      run.queued[n] = 0;
      if (!g.node(n).alive) continue;
      ++rep_.nodes_visited;
      if (run_node_passes(run, n)) continue;
      // Outputs whose types folding upstream made inferable: consumers may match rules now.
      std::vector<NodeId> refined;
      if (refine_node_types(g, n, opset_, refined)) push_all(run, refined);
      try_rules(run, n);
    }
  }

 private:
  // One graph's worklist and the state its rewrites share.
  struct GraphRun {
    Graph& g;
    MatchEnv& env;
    RewriteState& state;
    InitializerDedup& dedup;
    std::deque<NodeId> queue;
    std::vector<uint8_t> queued;
  };

  // ---- built-in passes ----

  // A built-in pass over one node; true when it changed the graph (`touched`: nodes to revisit).
  // Each counts what it did (count_pass).
  struct NodePass {
    const char* name;
    bool (Runner::*run)(GraphRun& r, NodeId n, std::vector<NodeId>& touched);
  };
  static const NodePass kNodePasses[3];

  bool dead_code(GraphRun& r, NodeId n, std::vector<NodeId>& touched) {
    std::string name = r.g.node(n).name;
    if (!dead_code_pass(r.g, n, touched)) return false;
    count_pass(kDeadCode, r.g, {name});
    return true;
  }
  bool cse(GraphRun& r, NodeId n, std::vector<NodeId>& touched) {
    std::string name = r.g.node(n).name;
    if (!cse_pass(r.g, n, touched)) return false;
    count_pass(kCse, r.g, {name});
    return true;
  }
  // Folds n; the initializers it makes are offered to initializer_dedup.
  bool fold(GraphRun& r, NodeId n, std::vector<NodeId>& touched) {
    const FoldOptions options{opts_.fold_max_bytes, opset_};
    std::string name = r.g.node(n).name;
    std::vector<ValueId> outs = r.g.node(n).outputs;
    if (!constant_folding_pass(r.g, n, options, touched)) return false;
    count_pass(kConstantFolding, r.g, {name});
    if (enabled(kInitializerDedup))
      for (ValueId o : outs)
        if (o != kNoValue && r.g.value(o).alive && r.dedup.add(o, touched)) count_pass(kInitializerDedup, r.g, {});
    return true;
  }

  // The passes in order; the first that changes the graph ends the node's visit.
  bool run_node_passes(GraphRun& r, NodeId n) {
    for (const NodePass* p : passes_) {
      std::vector<NodeId> touched;
      if (!(this->*(p->run))(r, n, touched)) continue;
      push_all(r, touched);
      return true;
    }
    return false;
  }

  bool enabled(const char* pass) const { return enabled_.count(pass) > 0; }

  // ---- the worklist ----

  void push(GraphRun& r, NodeId n) {
    const Graph& g = r.g;
    if (n >= g.node_capacity() || !g.node(n).alive) return;
    if (n >= r.queued.size()) r.queued.resize(g.node_capacity(), 0);
    r.env.norm.invalidate(n);
    if (r.queued[n]) return;
    r.queued[n] = 1;
    r.queue.push_back(n);
  }

  // A change at n (a new node, an input that became constant) can complete a match rooted up to
  // reach_ nodes downstream of n (a constant weight two ops below an Add root), and that root may
  // have been visited already: re-queue n, and its consumers to that depth that are the root op of
  // some rule (nothing else changed for them).
  void push_all(GraphRun& r, const std::vector<NodeId>& ns) {
    const Graph& g = r.g;
    for (NodeId n : ns) {
      push(r, n);
      frontier_.assign(1, n);
      for (int level = 0; level < reach_ && !frontier_.empty(); ++level) {
        next_.clear();
        for (NodeId f : frontier_) {
          if (f >= g.node_capacity() || !g.node(f).alive) continue;
          for (ValueId o : g.node(f).outputs)
            if (o != kNoValue)
              for (const Use& u : g.value(o).uses) {
                if (is_root_op(g.node(u.node).op)) push(r, u.node);
                next_.push_back(u.node);
              }
        }
        frontier_.swap(next_);
      }
    }
  }

  // The arithmetic a rewrite writes on constants (folded weights, filter sums) is folded right
  // away, in creation order (inputs before consumers), so no rule sees it half folded: a MatMul
  // that sums filters is not a product to fuse into a FusedMatMul.
  void fold_new_constants(GraphRun& r, const std::vector<NodeId>& created, std::vector<NodeId>& touched) {
    if (!enabled(kConstantFolding)) return;
    for (NodeId nn : created)
      if (r.g.node(nn).alive) fold(r, nn, touched);
  }

  bool is_root_op(OpType op) const { return op.id() < by_op_.size() && !by_op_[op.id()].empty(); }

  // ---- rules ----

  void try_rules(GraphRun& r, NodeId n) {
    Graph& g = r.g;
    OpType op = g.node(n).op;
    if (op.id() >= by_op_.size()) return;
    const std::vector<int>& candidates = by_op_[op.id()];
    if (candidates.empty() || touches_non_tensor(g, n)) return;
    operand_ops(g, g.node(n), operand_ops_);  // read once, tested by every candidate's prefilter
    for (size_t ci = 0; ci < candidates.size(); ++ci) {
      int c = candidates[ci];
      const CompiledRule& cr = compiled_[c];
      const Rule& rule = *cr.rule;
      const bool describe = !described_.empty() && described_.count(c);
      // A described rule skips the prefilter: its near misses must say which check failed.
      if (!describe && !filters_[c].may_match(operand_ops_)) continue;
      NearMiss miss;
      Match m;
      size_t before = r.env.attempts;
      bool ok = match_rule(cr, r.env, n, m, describe ? &miss : nullptr);
      rep_.match_attempts += r.env.attempts - before;
      if (!ok) {
        if (describe) {
          RootInfo root{n, g.node(n).name, g.node(n).op.qualified()};
          for (RewriteObserver* o : observers_) o->near_miss(g, root, cr, miss, progress());
        }
        continue;
      }
      RootInfo root;
      if (!observers_.empty()) root = RootInfo{n, g.node(n).name, g.node(n).op.qualified()};
      ApplyResult res = apply_rewrite(g, cr, m, r.env, r.state, opts_.gate);
      if (res.skipped) ++rep_.skipped;
      if (res.changed) {
        ++rep_.rewrites;
        ++rep_.rules_fired[rule.name];
      }
      if (!observers_.empty()) {
        later_.clear();
        if (res.changed)
          for (size_t k = ci + 1; k < candidates.size(); ++k) later_.push_back(&compiled_[candidates[k]]);
        for (RewriteObserver* o : observers_) o->matched(g, root, cr, res, later_, progress());
      }
      if (!res.changed) continue;
      remember(c, res.depth);
      std::vector<NodeId> touched = res.touched;
      touched.insert(touched.end(), res.new_nodes.begin(), res.new_nodes.end());
      if (enabled(kInitializerDedup))
        for (NodeId nn : res.new_nodes)
          for (ValueId in : g.node(nn).inputs)
            if (in != kNoValue && g.value(in).is_constant_initializer() && r.dedup.add(in, touched))
              count_pass(kInitializerDedup, g, {});
      fold_new_constants(r, res.new_nodes, touched);
      push_all(r, touched);
      check_limits(res.depth);
      return;
    }
  }

  RunProgress progress() const { return RunProgress{rep_.nodes_visited, rep_.rewrites}; }

  void count_pass(const char* pass, Graph& g, std::vector<std::string> nodes, int times = 1) {
    rep_.rules_fired[pass] += times;
    rep_.rewrites += times;
    for (RewriteObserver* o : observers_) o->pass_fired(g, pass, nodes, times, progress());
  }

  // ---- termination ----

  void remember(int rule, int depth) {
    recent_.push_back({rule, depth});
    if (recent_.size() > 256) recent_.pop_front();
  }

  // "a (rules/x.rules:3), b (rules/x.rules:9)": the rules among the recent rewrites at or above
  // a depth, by name.
  std::string rules_involved(int min_depth) const {
    std::map<std::string, std::set<std::string>> where;
    for (const auto& [c, d] : recent_)
      if (d >= min_depth) {
        const Rule& r = *compiled_[c].rule;
        auto& at = where[r.name];
        if (!r.file.empty()) at.insert(r.location());
      }
    std::string s;
    for (const auto& [name, locations] : where) {
      std::string at;
      for (const std::string& l : locations) at += (at.empty() ? "" : ", ") + l;
      s += (s.empty() ? "" : ", ") + name + (at.empty() ? "" : " (" + at + ")");
    }
    return s;
  }

  void check_limits(int depth) {
    if (depth > opts_.max_depth) {
      rep_.stop = StopReason::Cycle;
      rep_.stop_message = "rewriting does not terminate: rules " + rules_involved(opts_.max_depth / 2) +
                          " keep rewriting each other's results (rewrite depth " + std::to_string(depth) +
                          " on one spot)";
    } else if (rep_.rewrites > max_rewrites_) {
      rep_.stop = StopReason::IterationLimit;
      rep_.stop_message = "rewriting did not reach a fixed point after " + std::to_string(max_rewrites_) +
                          " rewrites; rules still firing: " + rules_involved(0);
    }
  }

  const RewriteOptions& opts_;
  int64_t opset_;
  RewriteReport& rep_;
  const std::vector<RewriteObserver*>& observers_;
  std::set<std::string> disabled_;
  std::set<std::string> enabled_;        // built-in passes not disabled
  std::vector<const NodePass*> passes_;  // the enabled node passes, in order
  std::vector<CompiledRule> compiled_;
  std::vector<OperandFilter> filters_;  // parallel to compiled_ (operand_filter.h)
  OperandOps operand_ops_;              // the operand producers of the node being tried
  std::set<int> described_;             // compiled rules whose near misses an observer wants
  std::vector<std::vector<int>> by_op_;
  std::vector<const CompiledRule*> later_;
  std::vector<NodeId> frontier_, next_;
  std::deque<std::pair<int, int>> recent_;  // (compiled rule, rewrite depth) of the last rewrites
  size_t max_rewrites_ = 0;
  int reach_ = 0;  // the deepest pattern's node count from its root to a leaf node, minus one
};

const Runner::NodePass Runner::kNodePasses[3] = {
    {kDeadCode, &Runner::dead_code}, {kConstantFolding, &Runner::fold}, {kCse, &Runner::cse}};

size_t count_nodes(const Graph& g) {
  size_t n = g.num_nodes();
  for (NodeId id : g.order())
    for (Graph* sg : g.subgraphs(id)) n += count_nodes(*sg);
  return n;
}

}  // namespace

RewriteReport run_rewrites(Graph& graph, const std::vector<Rule>& rules, const RewriteOptions& opts, int64_t opset) {
  RewriteReport rep;
  std::vector<RewriteObserver*> observers = opts.observers;
  TraceObserver trace;
  ExplainObserver explain(opts.explain_rule);
  if (opts.trace) observers.push_back(&trace);
  if (!opts.explain_rule.empty()) observers.push_back(&explain);
  Runner runner(rules, opts, opset, rep, observers);
  runner.run_graph(graph, count_nodes(graph));
  rep.trace = std::move(trace.records);
  rep.explain = std::move(explain.records);
  return rep;
}

RewriteReport run_rewrites(Model& model, const std::vector<Rule>& rules, const RewriteOptions& opts) {
  RewriteReport rep = run_rewrites(*model.graph, rules, opts, model.opset(""));
  if (opts.reinfer_shapes && rep.rewrites > 0) infer_shapes(model);
  return rep;
}

}  // namespace fusor
