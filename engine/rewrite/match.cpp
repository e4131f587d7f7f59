#include "engine/rewrite/match.h"

#include <algorithm>
#include <sstream>

#include "core/util/error.h"
#include "engine/rewrite/explain.h"
#include "engine/rewrite/graph_util.h"
#include "engine/rewrite/predicate.h"

namespace fusor {

const char* miss_kind_name(MissKind k) {
  switch (k) {
    case MissKind::Op: return "op";
    case MissKind::Arity: return "arity";
    case MissKind::Attribute: return "attribute";
    case MissKind::Input: return "input";
    case MissKind::Literal: return "literal";
    case MissKind::OutsideUse: return "outside use";
    case MissKind::Where: return "where";
  }
  return "?";
}

namespace {
// Whether var is the variadic tail `xs...` of some pattern node.
bool is_tail_var(const Pattern& p, int var) {
  for (const PatternNode& pn : p.nodes)
    for (const PInput& in : pn.inputs)
      if (in.kind == PInput::Kind::Tail && in.var == var) return true;
  return false;
}
}  // namespace

CompiledRule compile_rule(const Rule& r, int index) {
  auto bad = [&](const std::string& msg) { throw_bad_input(r.location() + ": rule '" + r.name + "': " + msg); };
  const Pattern& p = r.pattern;
  int nv = static_cast<int>(p.vars.size()), nn = static_cast<int>(p.nodes.size());
  if (p.root < 0 || p.root >= nn) bad("pattern has no root node");
  for (int v = 0; v < nv; ++v) {
    const PatternVar& pv = p.vars[v];
    if (pv.producer >= nn) bad("var '" + pv.name + "' names a missing pattern node");
    if (pv.producer >= 0 &&
        (pv.slot < 0 || pv.slot >= static_cast<int>(p.nodes[pv.producer].outputs.size()) ||
         p.nodes[pv.producer].outputs[pv.slot] != v))
      bad("var '" + pv.name + "' disagrees with its producer's outputs");
  }
  // Nodes the match reaches from the root down through inputs; a pattern with several roots reaches
  // the others up from a value already bound (their shared input), through its consumers.
  std::vector<uint8_t> reached(nn, 0);
  std::vector<uint8_t> known(nv, 0);  // vars bound once the reached nodes are
  std::vector<UpStep> up;
  std::vector<int> stack = {p.root};
  reached[p.root] = 1;
  auto descend = [&]() {
    while (!stack.empty()) {
      int n = stack.back();
      stack.pop_back();
      for (int o : p.nodes[n].outputs)
        if (o >= 0 && o < nv) known[o] = 1;
      const PatternNode& pn = p.nodes[n];
      if (pn.ops.empty()) bad("pattern node " + std::to_string(n) + " has no op");
      for (size_t i = 0; i < pn.inputs.size(); ++i) {
        const PInput& in = pn.inputs[i];
        if (in.kind == PInput::Kind::Tail && i + 1 != pn.inputs.size()) bad("a variadic tail must be the last input");
        if (in.kind == PInput::Kind::Literal && (in.literal < 0 || in.literal >= static_cast<int>(p.literals.size())))
          bad("literal index out of range");
        if (in.kind == PInput::Kind::Var || in.kind == PInput::Kind::Tail) {
          if (in.var < 0 || in.var >= nv) bad("input refers to a missing var");
          known[in.var] = 1;
          int q = p.vars[in.var].producer;
          if (q >= 0 && !reached[q]) { reached[q] = 1; stack.push_back(q); }
        }
      }
    }
  };
  descend();
  for (;;) {
    int next = -1, via = -1;
    for (int n = 0; n < nn && next < 0; ++n) {
      if (reached[n]) continue;
      for (const PInput& in : p.nodes[n].inputs)
        if (in.kind == PInput::Kind::Var && in.var >= 0 && in.var < nv && known[in.var]) {
          next = n;
          via = in.var;
          break;
        }
    }
    if (next < 0) break;
    up.push_back({next, via});
    reached[next] = 1;
    stack.push_back(next);
    descend();
  }
  for (int n = 0; n < nn; ++n)
    if (!reached[n]) bad("pattern node " + std::to_string(n) + " shares no value with the rest of the pattern");
  CompiledRule cr;
  cr.rule = &r;
  cr.up = std::move(up);
  cr.index = index;
  cr.redefined.assign(nv, 0);
  const Rewrite& rw = r.rewrite;
  auto check_rinput = [&](const RInput& in, int limit) {
    if (in.kind == RInput::Kind::Var && (in.var < 0 || in.var >= nv)) bad("rewrite refers to a missing var");
    if (in.kind == RInput::Kind::Tail && !is_tail_var(p, in.var)) bad("a rewrite passes on a variadic capture the match does not have");
    if (in.kind == RInput::Kind::NewNode && (in.node < 0 || in.node >= limit || in.slot < 0 ||
                                              in.slot >= rw.nodes[in.node].num_outputs))
      bad("rewrite refers to a node not defined before it");
    if (in.kind == RInput::Kind::Expr && (in.expr < 0 || in.expr >= static_cast<int>(rw.exprs.size())))
      bad("rewrite expression index out of range");
    if ((in.kind == RInput::Kind::Literal || (in.kind == RInput::Kind::Var && in.literal >= 0)) &&
        (in.literal < 0 || in.literal >= static_cast<int>(rw.literals.size())))
      bad("rewrite literal index out of range");
  };
  for (size_t i = 0; i < rw.nodes.size(); ++i) {
    const RNode& rn = rw.nodes[i];
    if (rn.op_of_var >= nv || (rn.op_of_var >= 0 && p.vars[rn.op_of_var].producer < 0))
      bad("a rewrite node reuses the op of a value the match does not produce");
    if (rn.op_of_var < 0 && !rn.op.valid()) bad("rewrite node without an op");
    for (const RInput& in : rw.nodes[i].inputs) check_rinput(in, static_cast<int>(i));
  }
  if (rw.redefs.empty()) bad("rewrite redefines no output");
  for (const Redefinition& d : rw.redefs) {
    if (d.var < 0 || d.var >= nv || p.vars[d.var].producer < 0) bad("a rewrite may only redefine matched outputs");
    check_rinput(d.source, static_cast<int>(rw.nodes.size()));
    if (d.source.kind != RInput::Kind::NewNode && d.source.kind != RInput::Kind::Var)
      bad("an output must be redefined as a new node's output or a var");
    cr.redefined[d.var] = 1;
  }
  return cr;
}

namespace {

struct Goal {
  enum class Kind : uint8_t { Value, Node, Literal };
  Kind kind;
  int a;       // var / pattern node / literal
  uint32_t x;  // value / graph node
  int pn;      // pattern node the goal comes from (-1: none)
  int slot;    // its input slot
};

class Solver {
 public:
  Solver(const CompiledRule& cr, MatchEnv& env, Match& m, NearMiss* miss)
      : cr_(cr), p_(cr.rule->pattern), env_(env), g_(env.graph), m_(m), miss_(miss) {}

  bool run(NodeId root) {
    if (miss_) miss_->root = root;
    std::vector<Goal> goals = {Goal{Goal::Kind::Node, p_.root, root, -1, 0}};
    return solve(goals);
  }

 private:
  std::string vname(ValueId v) const { return v == kNoValue ? "(absent)" : "'" + g_.value(v).name + "'"; }
  std::string pvar(int v) const {
    return p_.vars[v].name.empty() ? "_t" + std::to_string(v) : p_.vars[v].name;
  }

  // Where a failure is: its kind, the input of the node it concerns, and for a node reached
  // through an input, the node reading it.
  struct At {
    MissKind kind;
    int input = -1;
    NodeId consumer = kNoNode;
    int consumer_input = -1;
  };

  template <typename F>
  bool fail(int pn, NodeId gn, int extra, At at, F&& reason) {
    if (miss_) {
      int progress = bound_nodes_ * 4 + extra;
      if (progress > best_) {
        best_ = progress;
        miss_->pattern_node = pn;
        miss_->node = gn;
        miss_->reason = (gn != kNoNode ? g_.node(gn).describe() + ": " : std::string()) + reason();
        miss_->kind = at.kind;
        miss_->input = at.input;
        miss_->consumer = at.consumer;
        miss_->consumer_input = at.consumer_input;
        miss_->progress = progress;
      }
    }
    return false;
  }

  void bind_var(int var, ValueId v) {
    m_.vars[var] = v;
    m_.bound[var] = 1;
    trail_.push_back(var);
  }
  void bind_node(int pn, NodeId n) {
    m_.nodes[pn] = n;
    ++bound_nodes_;
    trail_.push_back(-1 - pn);
  }
  void undo(size_t mark) {
    while (trail_.size() > mark) {
      int t = trail_.back();
      trail_.pop_back();
      if (t >= 0) {
        m_.bound[t] = 0;
        m_.vars[t] = kNoValue;
        m_.tails[t].clear();
      } else {
        m_.nodes[-1 - t] = kNoNode;
        --bound_nodes_;
      }
    }
  }

  bool solve(std::vector<Goal>& goals) {
    if (goals.empty()) {
      for (const UpStep& s : cr_.up)
        if (m_.nodes[s.node] == kNoNode) return up_step(s, goals);
      return final_checks();
    }
    Goal gl = goals.back();
    goals.pop_back();
    bool ok = false;
    size_t mark = trail_.size();
    switch (gl.kind) {
      case Goal::Kind::Value: ok = value_goal(gl, goals); break;
      case Goal::Kind::Node: ok = node_goal(gl, goals); break;
      case Goal::Kind::Literal: ok = literal_goal(gl) && solve(goals); break;
    }
    if (!ok) {
      undo(mark);
      goals.push_back(gl);
    }
    return ok;
  }

  bool value_goal(const Goal& gl, std::vector<Goal>& goals) {
    int var = gl.a;
    ValueId v = gl.x;
    NodeId at = gl.pn >= 0 ? m_.nodes[gl.pn] : kNoNode;
    if (m_.bound[var]) {
      if (m_.vars[var] != v)
        return fail(gl.pn, at, 1, {MissKind::Input, gl.slot}, [&] {
          return "input " + std::to_string(gl.slot) + " is " + vname(v) + " but '" + pvar(var) + "' is already " +
                 vname(m_.vars[var]);
        });
      return solve(goals);
    }
    const PatternVar& pv = p_.vars[var];
    if (pv.producer < 0) {
      bind_var(var, v);
      return solve(goals);
    }
    if (v == kNoValue)
      return fail(gl.pn, at, 1, {MissKind::Input, gl.slot}, [&] { return "input " + std::to_string(gl.slot) + " is absent"; });
    const Value& val = g_.value(v);
    const PatternNode& q = p_.nodes[pv.producer];
    if (val.producer == kNoNode)
      return fail(gl.pn, at, 1, {MissKind::Input, gl.slot}, [&] {
        return "input " + std::to_string(gl.slot) + " " + vname(v) + " is not produced by a node (expected " +
               q.ops[0].name() + (q.ops.size() > 1 ? " | ..." : "") + ")";
      });
    if (val.producer_slot != pv.slot)
      return fail(gl.pn, at, 1, {MissKind::Input, gl.slot}, [&] {
        return "input " + std::to_string(gl.slot) + " " + vname(v) + " is output " + std::to_string(val.producer_slot) +
               " of its producer, expected output " + std::to_string(pv.slot);
      });
    bind_var(var, v);
    goals.push_back(Goal{Goal::Kind::Node, pv.producer, val.producer, gl.pn, gl.slot});
    return solve(goals);
  }

  bool literal_goal(const Goal& gl) {
    const Literal& lit = p_.literals[gl.a];
    ValueId v = gl.x;
    NodeId at = m_.nodes[gl.pn];
    TensorPtr t = constant_of(g_, v);
    if (!t)
      return fail(gl.pn, at, 1, {MissKind::Literal, gl.slot}, [&] {
        return "input " + std::to_string(gl.slot) + ": expected literal " + lit.str() + ", got " + vname(v) +
               " (not constant)";
      });
    const Node& n = g_.node(at);
    int out_rank = !n.outputs.empty() && n.outputs[0] != kNoValue ? g_.value(n.outputs[0]).type.rank() : -1;
    if (!literal_matches(lit, *t, out_rank))
      return fail(gl.pn, at, 1, {MissKind::Literal, gl.slot}, [&] {
        std::ostringstream one;  // %g-style: 0.4, 2, 1e-05
        if (t->numel() == 1) one << t->as_double(0);
        std::string got = t->numel() == 1 ? one.str() : shape_str(t->shape()) + " tensor";
        return "input " + std::to_string(gl.slot) + ": expected literal " + lit.str() + ", got " + vname(v) + " = " + got;
      });
    return true;
  }

  bool node_goal(const Goal& gl, std::vector<Goal>& goals) {
    int pn_idx = gl.a;
    NodeId gn = gl.x;
    const PatternNode& pn = p_.nodes[pn_idx];
    const Node& node = g_.node(gn);
    NodeId consumer = gl.pn >= 0 ? m_.nodes[gl.pn] : kNoNode;
    const At here{MissKind::Op, -1, consumer, consumer == kNoNode ? -1 : gl.slot};
    // 1. op id
    if (std::find(pn.ops.begin(), pn.ops.end(), node.op) == pn.ops.end())
      return fail(pn_idx, gn, 0, here, [&] {
        std::string want;
        for (size_t i = 0; i < pn.ops.size(); ++i) want += (i ? " | " : "") + pn.ops[i].qualified();
        std::string s = "expected " + want;
        if (consumer != kNoNode)
          s += " (it feeds input " + std::to_string(gl.slot) + " of " + g_.node(consumer).describe() + ")";
        return s;
      });
    for (size_t i = 0; i < m_.nodes.size(); ++i)
      if (m_.nodes[i] == gn)
        return fail(pn_idx, gn, 0, here, [&] { return std::string("the node is already matched by another pattern node"); });
    const NormalizedNode& nn = env_.norm.get(gn);
    // 2. arity
    size_t P = pn.inputs.size();
    bool has_tail = P > 0 && pn.inputs.back().kind == PInput::Kind::Tail;
    if (has_tail) --P;
    size_t N = nn.inputs.size();
    if (has_tail ? N < P : N > P)
      return fail(pn_idx, gn, 0, {MissKind::Arity}, [&] {
        return "has " + std::to_string(N) + " inputs, pattern expects " + (has_tail ? "at least " : "at most ") +
               std::to_string(P);
      });
    for (size_t o = 0; o < pn.outputs.size(); ++o)
      if (pn.outputs[o] >= 0 && (o >= node.outputs.size() || node.outputs[o] == kNoValue))
        return fail(pn_idx, gn, 0, {MissKind::Arity}, [&] { return "has no output " + std::to_string(o); });
    // 3. attribute constants
    const int rank = axes_rank(g_, gn);
    for (const AttrConstraint& c : pn.attrs) {
      auto have = read_node_attr(env_, gn, c.name);
      Attribute want = c.value;
      want.name = c.name;
      normalize_axis_attr(want, rank);
      if (!have || !attr_equal(*have, want))
        return fail(pn_idx, gn, 0, {MissKind::Attribute}, [&] {
          return "attribute " + attr_str(want) + " expected, got " + (have ? attr_str(*have) : c.name + " absent");
        });
    }
    // Bind the node and its named outputs.
    bind_node(pn_idx, gn);
    for (size_t o = 0; o < pn.outputs.size(); ++o) {
      int var = pn.outputs[o];
      if (var < 0) continue;
      if (m_.bound[var] && m_.vars[var] != node.outputs[o]) return false;
      if (!m_.bound[var]) bind_var(var, node.outputs[o]);
    }
    // 4. inputs, over every operand order the op allows.
    std::vector<std::vector<int>> orders;
    std::vector<std::vector<int>> tails;
    auto add_order = [&](std::vector<int> ord) {
      std::vector<int> rest;
      if (has_tail)
        for (size_t j = 0; j < N; ++j)
          if (std::find(ord.begin(), ord.end(), static_cast<int>(j)) == ord.end()) rest.push_back(static_cast<int>(j));
      orders.push_back(std::move(ord));
      tails.push_back(std::move(rest));
    };
    const OpTraits& traits = op_traits(node.op);
    if (traits.nary_set && (has_tail || N == P) && P > 0) {
      // Injections of the P pattern operands into the N node operands, identity first.
      std::vector<int> idx(N);
      for (size_t j = 0; j < N; ++j) idx[j] = static_cast<int>(j);
      std::vector<std::vector<int>> seen;
      do {
        std::vector<int> ord(idx.begin(), idx.begin() + P);
        if (std::find(seen.begin(), seen.end(), ord) == seen.end()) {
          seen.push_back(ord);
          add_order(ord);
        }
      } while (std::next_permutation(idx.begin(), idx.end()));
    } else {
      std::vector<int> ord(P);
      for (size_t i = 0; i < P; ++i) ord[i] = i < N ? static_cast<int>(i) : -1;
      add_order(ord);
      if (traits.commutative && P == 2 && N == 2 && !has_tail) add_order({1, 0});
    }
    size_t mark = trail_.size();
    for (size_t k = 0; k < orders.size(); ++k) {
      std::vector<Goal> next = goals;
      bool ok = true;
      // Push in reverse so input 0 is solved first.
      for (size_t ii = P; ii-- > 0 && ok;) {
        const PInput& in = pn.inputs[ii];
        int j = orders[k][ii];
        ValueId v = j < 0 ? kNoValue : nn.inputs[j];
        switch (in.kind) {
          case PInput::Kind::Wildcard: break;
          case PInput::Kind::Var:
            if (v == kNoValue && !in.optional) {
              ok = fail(pn_idx, gn, 1, {MissKind::Input, static_cast<int>(ii)},
                        [&] { return "input " + std::to_string(ii) + " is absent"; });
              break;
            }
            next.push_back(Goal{Goal::Kind::Value, in.var, v, pn_idx, static_cast<int>(ii)});
            break;
          case PInput::Kind::Literal:
            if (v == kNoValue) {
              ok = fail(pn_idx, gn, 1, {MissKind::Input, static_cast<int>(ii)},
                        [&] { return "input " + std::to_string(ii) + " is absent"; });
              break;
            }
            next.push_back(Goal{Goal::Kind::Literal, in.literal, v, pn_idx, static_cast<int>(ii)});
            break;
          case PInput::Kind::Tail: break;
        }
      }
      if (!ok) continue;
      if (has_tail) {
        int tv = pn.inputs.back().var;
        std::vector<ValueId> vals;
        for (int j : tails[k]) vals.push_back(nn.inputs[j]);
        if (m_.bound[tv]) {
          if (m_.tails[tv] != vals) continue;
        } else {
          bind_var(tv, kNoValue);
          m_.tails[tv] = vals;
        }
      }
      if (solve(next)) return true;
      undo(mark);
    }
    return false;
  }

  // A pattern node the match reaches from a bound value up through its consumers (another root of
  // a pattern with several): each consumer of the value not matched yet is a candidate.
  bool up_step(const UpStep& s, std::vector<Goal>& goals) {
    const ValueId v = m_.vars[s.var];
    const PatternNode& pn = p_.nodes[s.node];
    bool tried = false;
    if (v != kNoValue) {
      std::vector<NodeId> seen;
      for (const Use& u : g_.value(v).uses) {
        if (std::find(seen.begin(), seen.end(), u.node) != seen.end()) continue;
        seen.push_back(u.node);
        if (std::find(m_.nodes.begin(), m_.nodes.end(), u.node) != m_.nodes.end()) continue;
        if (std::find(pn.ops.begin(), pn.ops.end(), g_.node(u.node).op) == pn.ops.end()) continue;
        tried = true;
        size_t mark = trail_.size();
        std::vector<Goal> next = goals;
        next.push_back(Goal{Goal::Kind::Node, s.node, u.node, -1, 0});
        if (solve(next)) return true;
        undo(mark);
      }
    }
    if (!tried)
      fail(s.node, kNoNode, 0, {MissKind::Op}, [&] {
        std::string want;
        for (size_t i = 0; i < pn.ops.size(); ++i) want += (i ? " | " : "") + pn.ops[i].qualified();
        return "no other consumer of " + vname(v) + " is " + want + " (for '" + pvar(s.var) + "' read by another root)";
      });
    return false;
  }

  bool final_checks() {
    // The outside-use rule.
    for (size_t q = 0; q < m_.nodes.size(); ++q) {
      NodeId gn = m_.nodes[q];
      const Node& node = g_.node(gn);
      for (ValueId o : node.outputs) {
        if (o == kNoValue) continue;
        bool redefined = false;
        for (size_t v = 0; v < m_.vars.size(); ++v)
          if (m_.bound[v] && m_.vars[v] == o && cr_.redefined[v] && p_.vars[v].producer >= 0) redefined = true;
        if (redefined) continue;
        const Value& val = g_.value(o);
        if (val.is_graph_output)
          return fail(static_cast<int>(q), gn, 2, {MissKind::OutsideUse}, [&] { return "output '" + val.name + "' is a graph output the rewrite does not redefine"; });
        for (const Use& u : val.uses) {
          if (std::find(m_.nodes.begin(), m_.nodes.end(), u.node) == m_.nodes.end())
            return fail(static_cast<int>(q), gn, 2, {MissKind::OutsideUse}, [&] {
              return "output '" + val.name + "' has a consumer outside the match: " + g_.node(u.node).describe();
            });
        }
      }
    }
    if (p_.where && !eval_predicate(*p_.where, p_, m_, env_))
      return fail(-1, m_.nodes[p_.root], 3, {MissKind::Where},
                  [&] { return "the where clause is false: " + explain_predicate(*p_.where, p_, m_, env_); });
    return true;
  }

  const CompiledRule& cr_;
  const Pattern& p_;
  MatchEnv& env_;
  const Graph& g_;
  Match& m_;
  NearMiss* miss_;
  std::vector<int> trail_;
  int bound_nodes_ = 0;
  int best_ = -1;
};

}  // namespace

bool match_rule(const CompiledRule& cr, MatchEnv& env, NodeId root, Match& m, NearMiss* miss) {
  ++env.attempts;
  const Pattern& p = cr.rule->pattern;
  // Cheapest check before any allocation: the root's op.
  const auto& ops = p.nodes[p.root].ops;
  if (std::find(ops.begin(), ops.end(), env.graph.node(root).op) == ops.end()) return false;
  m.vars.assign(p.vars.size(), kNoValue);
  m.bound.assign(p.vars.size(), 0);
  m.nodes.assign(p.nodes.size(), kNoNode);
  m.tails.assign(p.vars.size(), {});
  Solver s(cr, env, m, miss);
  return s.run(root);
}

}  // namespace fusor
