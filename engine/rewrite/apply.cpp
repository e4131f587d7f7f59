#include "engine/rewrite/apply.h"

#include <algorithm>
#include <cmath>
#include <cfloat>

#include "core/util/error.h"
#include "engine/rewrite/graph_util.h"
#include "engine/rewrite/infer.h"
#include "engine/rewrite/kernel_gate.h"
#include "engine/rewrite/predicate.h"
#include "engine/rewrite/provenance.h"
#include "core/ops/op_names.h"
#include "core/ops/op_traits.h"

namespace fusor {

namespace {

// Numeric attributes of a matched node as floats, for `a.attrs` (Clip: [min, max]).
std::vector<float> attrs_as_floats(MatchEnv& env, NodeId n) {
  const Node& node = env.graph.node(n);
  std::vector<float> out;
  if (op_traits(node.op).bounds_as_params) {
    const NormalizedNode& nn = env.norm.get(n);
    const Attribute* lo = nn.attr("min");
    const Attribute* hi = nn.attr("max");
    out.push_back(lo && lo->kind == AttrKind::Float ? lo->f : -FLT_MAX);
    out.push_back(hi && hi->kind == AttrKind::Float ? hi->f : FLT_MAX);
    return out;
  }
  // Every scalar numeric attribute the node has or its schema defaults, in name order.
  std::vector<std::string> names;
  for (const Attribute& a : env.norm.get(n).attrs)
    if (a.kind == AttrKind::Float || a.kind == AttrKind::Int) names.push_back(a.name);
  for (const char* common : {"alpha", "beta", "gamma"})
    if (std::find(names.begin(), names.end(), common) == names.end() &&
        onnx_attr_kind(node.op, common, env.opset) == AttrKind::Float)
      names.push_back(common);
  std::sort(names.begin(), names.end());
  for (const std::string& nm : names) {
    auto a = read_node_attr(env, n, nm);
    if (!a) continue;
    out.push_back(a->kind == AttrKind::Float ? a->f : static_cast<float>(a->i));
  }
  return out;
}

class Applier {
 public:
  Applier(Graph& g, const CompiledRule& cr, const Match& m, MatchEnv& env, RewriteState& st, const KernelGate* gate)
      : g_(g), cr_(cr), r_(*cr.rule), p_(cr.rule->pattern), rw_(cr.rule->rewrite), m_(m), env_(env), st_(st),
        gate_(gate) {}

  ApplyResult run() {
    root_ = m_.nodes[p_.root];
    int grows = rw_.nodes.size() >= m_.nodes.size() ? 1 : 0;
    for (NodeId n : m_.nodes) res_.depth = std::max(res_.depth, st_.get(n) + grows);
    for (NodeId n : m_.nodes) res_.matched.push_back(g_.node(n).name);
    if (is_noop_identity()) return res_;
    // Read before the matched nodes go: their own provenance folds into the new nodes'.
    std::string provenance = provenance_doc_string(provenance_of_rewrite(g_, r_.name, m_.nodes));
    try {
      build_nodes();
      check_kernels();
      std::vector<ValueId> sources;
      for (const Redefinition& d : rw_.redefs) sources.push_back(source_value(d));
      check_types(sources);
      redefine(sources);
    } catch (const Refused& r) {
      rollback();
      res_.refused = r.why;
      res_.skipped = r.skipped;
      res_.new_nodes.clear();
      return res_;
    }
    remove_matched();
    finish();
    for (NodeId n : new_nodes_) g_.node(n).doc_string = provenance;
    res_.changed = true;
    return res_;
  }

 private:
  struct Refused {
    std::string why;
    bool skipped = false;  // the provider cannot run the result
  };

  void check_kernels() {
    if (!gate_ || !gate_->restricts()) return;
    for (NodeId n : KernelGate::runtime_nodes(g_, new_nodes_)) {
      std::string why = gate_->cannot_run(env_, n);
      if (!why.empty()) throw Refused{why, true};
    }
  }

  // `y = x` on a graph output that x cannot be renamed to, where the match is that Identity.
  bool is_noop_identity() {
    if (rw_.nodes.size() != 0 || rw_.redefs.size() != 1 || m_.nodes.size() != 1) return false;
    const Node& n = g_.node(m_.nodes[0]);
    const Redefinition& d = rw_.redefs[0];
    if (n.op != op::Identity || d.source.kind != RInput::Kind::Var) return false;
    ValueId x = m_.vars[d.source.var], y = m_.vars[d.var];
    return x != kNoValue && n.inputs.size() == 1 && n.inputs[0] == x && g_.value(y).is_graph_output && !can_take_name(x);
  }

  bool is_matched(NodeId n) const { return std::find(m_.nodes.begin(), m_.nodes.end(), n) != m_.nodes.end(); }

  bool can_take_name(ValueId x) const {
    const Value& v = g_.value(x);
    return v.producer != kNoNode && !v.is_graph_output && !v.is_graph_input && v.captured_from == kNoValue &&
           !is_matched(v.producer);
  }

  ValueId var_value(int var) const {
    if (!m_.bound[var]) throw Refused{"'" + p_.vars[var].name + "' is not bound by the match"};
    return m_.vars[var];
  }

  std::vector<DataType> known_types(const RNode& rn, const std::vector<ValueId>& resolved) {
    std::vector<DataType> known(rn.inputs.size(), DataType::Undefined);
    for (size_t i = 0; i < rn.inputs.size(); ++i)
      if (resolved[i] != kNoValue) known[i] = g_.value(resolved[i]).type.elem;
    return known;
  }

  ValueId make_literal(const Literal& lit, DataType dtype) {
    ValueId v = g_.add_initializer(g_.unique_name(r_.name + "_c"), literal_tensor(lit, dtype));
    new_values_.push_back(v);
    return v;
  }

  void build_nodes() {
    const Node& root = g_.node(root_);
    for (size_t i = 0; i < rw_.nodes.size(); ++i) {
      const RNode& rn = rw_.nodes[i];
      // `y.op(...)`: the op that matched y (one of an alternation's ops).
      const OpType op = rn.op_of_var >= 0 ? g_.node(producer_of(rn.op_of_var)).op : rn.op;
      // Inputs: vars and new nodes first, then literals typed from them.
      std::vector<ValueId> in(rn.inputs.size(), kNoValue);
      std::vector<int> pending;
      std::vector<Literal> computed(rn.inputs.size());
      for (size_t s = 0; s < rn.inputs.size(); ++s) {
        const RInput& ri = rn.inputs[s];
        switch (ri.kind) {
          case RInput::Kind::Var:
            in[s] = var_value(ri.var);
            if (in[s] == kNoValue && ri.literal >= 0) pending.push_back(static_cast<int>(s));
            break;
          case RInput::Kind::NewNode: in[s] = g_.node(new_nodes_[ri.node]).outputs[ri.slot]; break;
          case RInput::Kind::Literal: pending.push_back(static_cast<int>(s)); break;
          case RInput::Kind::Expr: {
            PValue v = eval_expr(rw_.exprs[ri.expr], p_, m_, env_);
            if (v.kind == PValue::Kind::Num) {
              computed[s] = Literal::scalar(v.num);
            } else if (v.kind == PValue::Kind::List && v.known()) {
              // A list of whole numbers is an integer literal, as written ([2 * shape(q)[2]] in
              // Slice's starts is int64, not float); the input's type constraint still decides first.
              std::vector<double> vals;
              bool whole = true;
              for (const auto& x : v.list) {
                vals.push_back(x.num);
                whole = whole && x.num == std::floor(x.num) && std::abs(x.num) < 9.2e18;
              }
              computed[s] = Literal::list(vals, whole);
            } else {
              throw Refused{"input " + std::to_string(s) + " of the new " + op.name() + " evaluates to " + v.repr()};
            }
            pending.push_back(static_cast<int>(s));
            break;
          }
          case RInput::Kind::Absent: break;
          case RInput::Kind::Tail: break;  // spliced in below
        }
      }
      for (int s : pending) {
        const Literal& lit = rn.inputs[s].kind == RInput::Kind::Expr ? computed[s] : rw_.literals[rn.inputs[s].literal];
        DataType dt = lit.dtype != DataType::Undefined
                          ? lit.dtype
                          : literal_dtype(op, env_.opset, s, known_types(rn, in),
                                          lit.is_integer && lit.is_list ? DataType::Int64 : DataType::Float);
        in[s] = make_literal(lit, dt);
      }
      splice_tails(rn, in);
      while (!in.empty() && in.back() == kNoValue) in.pop_back();
      std::vector<Attribute> attrs;
      for (const AttrTemplate& t : rn.attrs) apply_attr(t, op, attrs);
      reexpress_lifted(op, in, attrs);
      std::string name = g_.unique_name(root.name.empty() ? r_.name : root.name + "/" + r_.name);
      NodeId id = g_.create_node(op, in, rn.num_outputs, attrs, name, root_);
      new_nodes_.push_back(id);
      res_.new_nodes.push_back(id);
      st_.set(id, res_.depth);
      infer_node_types(g_, id, op.domain().empty() ? env_.opset : 0);
    }
  }

  // Each Tail slot of `in` (one per template input) becomes the values its capture matched. A
  // literal after a tail was typed by its template position, which for the variadic ops
  // (Concat, Sum, Max, Min, Mean) is the same type constraint.
  void splice_tails(const RNode& rn, std::vector<ValueId>& in) const {
    if (std::none_of(rn.inputs.begin(), rn.inputs.end(), [](const RInput& r) { return r.kind == RInput::Kind::Tail; }))
      return;
    std::vector<ValueId> flat;
    for (size_t s = 0; s < rn.inputs.size(); ++s) {
      if (rn.inputs[s].kind != RInput::Kind::Tail) {
        flat.push_back(in[s]);
        continue;
      }
      var_value(rn.inputs[s].var);  // refuses an unbound capture
      const std::vector<ValueId>& t = m_.tails[rn.inputs[s].var];
      flat.insert(flat.end(), t.begin(), t.end());
    }
    in = std::move(flat);
  }

  static void set_attr(std::vector<Attribute>& attrs, Attribute a) {
    for (auto& x : attrs)
      if (x.name == a.name) { x = std::move(a); return; }
    attrs.push_back(std::move(a));
  }

  NodeId producer_of(int var) {
    ValueId v = var_value(var);
    if (v == kNoValue || g_.value(v).producer == kNoNode)
      throw Refused{"'" + p_.vars[var].name + "' has no producing node to read attributes from"};
    return g_.value(v).producer;
  }

  void apply_attr(const AttrTemplate& t, OpType op, std::vector<Attribute>& attrs) {
    switch (t.kind) {
      case AttrTemplate::Kind::Literal: {
        Attribute a = t.value;
        a.name = t.name;
        set_attr(attrs, std::move(a));
        return;
      }
      case AttrTemplate::Kind::CopyAll:
        for (const Attribute& a : env_.norm.get(producer_of(t.var)).attrs) set_attr(attrs, a);
        return;
      case AttrTemplate::Kind::Read: {
        auto a = read_node_attr(env_, producer_of(t.var), t.read_name);
        if (!a) throw Refused{"attribute '" + t.read_name + "' of '" + p_.vars[t.var].name + "' is absent and has no default"};
        a->name = t.name;
        set_attr(attrs, std::move(*a));
        return;
      }
      case AttrTemplate::Kind::OpName: {
        const Node& n = g_.node(producer_of(t.var));
        set_attr(attrs, Attribute::make_string(t.name, n.op.qualified()));
        return;
      }
      case AttrTemplate::Kind::AttrsOf:
        set_attr(attrs, Attribute::make_floats(t.name, attrs_as_floats(env_, producer_of(t.var))));
        return;
      case AttrTemplate::Kind::FromExpr: {
        PValue v = eval_expr(*t.expr, p_, m_, env_);
        auto a = pvalue_to_attr(v, t.name, onnx_attr_kind(op, t.name, env_.opset));
        if (!a) throw Refused{"attribute '" + t.name + "' evaluates to " + v.repr()};
        set_attr(attrs, std::move(*a));
        return;
      }
    }
  }

  // Normal-form attributes the model's opset spells as inputs become constant inputs again.
  void reexpress_lifted(OpType op, std::vector<ValueId>& in, std::vector<Attribute>& attrs) {
    if (!op.domain().empty()) return;
    for (size_t slot = 1; slot <= 2; ++slot) {
      auto name = lifted_input_attr(op, slot);
      if (!name || !lifted_as_input(op, *name, env_.opset)) continue;
      auto it = std::find_if(attrs.begin(), attrs.end(), [&](const Attribute& a) { return a.name == *name; });
      if (it == attrs.end()) continue;
      Tensor t;
      if (it->kind == AttrKind::Ints) {
        t = Tensor::from_vector<int64_t>({static_cast<int64_t>(it->ints.size())}, it->ints);
      } else if (it->kind == AttrKind::Float) {
        DataType dt = !in.empty() && in[0] != kNoValue ? g_.value(in[0]).type.elem : DataType::Float;
        Literal l = Literal::scalar(it->f);
        t = literal_tensor(l, dt == DataType::Undefined ? DataType::Float : dt);
      } else {
        continue;
      }
      ValueId v = g_.add_initializer(g_.unique_name(r_.name + "_" + *name), std::move(t));
      new_values_.push_back(v);
      if (in.size() <= slot) in.resize(slot + 1, kNoValue);
      in[slot] = v;
      attrs.erase(it);
    }
  }

  ValueId source_value(const Redefinition& d) {
    if (d.source.kind == RInput::Kind::NewNode) return g_.node(new_nodes_[d.source.node]).outputs[d.source.slot];
    ValueId x = var_value(d.source.var);
    if (x == kNoValue) throw Refused{"'" + p_.vars[d.var].name + "' is forwarded to an absent input"};
    if (g_.value(x).producer != kNoNode && is_matched(g_.value(x).producer)) {
      bool x_redefined = false;
      for (const Redefinition& o : rw_.redefs) x_redefined |= m_.vars[o.var] == x;
      if (!x_redefined) throw Refused{"'" + p_.vars[d.var].name + "' is forwarded to a value the rewrite removes"};
    }
    return x;
  }

  void check_types(const std::vector<ValueId>& sources) {
    for (size_t i = 0; i < rw_.redefs.size(); ++i) {
      const ValueType& want = g_.value(m_.vars[rw_.redefs[i].var]).type;
      const ValueType& got = g_.value(sources[i]).type;
      if (want.elem != DataType::Undefined && got.elem != DataType::Undefined && want.elem != got.elem)
        throw Refused{"'" + g_.value(m_.vars[rw_.redefs[i].var]).name + "' would change element type from " +
                      dtype_name(want.elem) + " to " + dtype_name(got.elem)};
      auto ws = want.static_shape(), gs = got.static_shape();
      if (ws && gs && *ws != *gs)
        throw Refused{"'" + g_.value(m_.vars[rw_.redefs[i].var]).name + "' would change shape from " + want.str() +
                      " to " + got.str()};
    }
  }

  void rollback() {
    for (size_t i = new_nodes_.size(); i-- > 0;) g_.remove_node(new_nodes_[i]);
    for (ValueId v : new_values_)
      if (g_.value(v).alive && g_.value(v).uses.empty()) g_.remove_value(v);
  }

  void redefine(const std::vector<ValueId>& sources) {
    for (size_t i = 0; i < rw_.redefs.size(); ++i) {
      ValueId y = m_.vars[rw_.redefs[i].var];
      ValueId src = sources[i];
      Value& yv = g_.value(y);
      bool is_new = rw_.redefs[i].source.kind == RInput::Kind::NewNode;
      if (yv.is_graph_output && !is_new && !can_take_name(src)) {
        // Keep an Identity so the graph output keeps its name.
        NodeId id = g_.create_node(op::Identity, {src}, 1, {}, g_.unique_name(yv.name + "_identity"), root_);
        new_nodes_.push_back(id);
        res_.new_nodes.push_back(id);
        st_.set(id, res_.depth);
        src = g_.node(id).outputs[0];
        is_new = true;
      }
      for (const Use& u : g_.value(y).uses)
        if (!is_matched(u.node)) res_.touched.push_back(u.node);
      g_.replace_all_uses(y, src);
      const auto& outs = g_.outputs();
      bool was_output = false;
      for (size_t o = 0; o < outs.size(); ++o)
        if (outs[o] == y) { g_.set_output(o, src); was_output = true; }
      if (is_new || was_output) renames_.push_back({src, g_.value(y).name, g_.value(y).type});
    }
  }

  void remove_matched() {
    // Consumers before producers, so intermediate values go with their producers.
    std::vector<NodeId> left = m_.nodes;
    std::sort(left.begin(), left.end());
    left.erase(std::unique(left.begin(), left.end()), left.end());
    for (NodeId n : left)
      for (ValueId in : g_.node(n).inputs)
        if (in != kNoValue && g_.value(in).producer != kNoNode && !is_matched(g_.value(in).producer))
          res_.touched.push_back(g_.value(in).producer);
    std::vector<ValueId> outs;
    while (!left.empty()) {
      bool progress = false;
      for (size_t i = 0; i < left.size(); ++i) {
        NodeId n = left[i];
        bool used_by_left = false;
        for (ValueId o : g_.node(n).outputs)
          if (o != kNoValue)
            for (const Use& u : g_.value(o).uses)
              used_by_left |= std::find(left.begin(), left.end(), u.node) != left.end() && u.node != n;
        if (used_by_left) continue;
        for (ValueId o : g_.node(n).outputs)
          if (o != kNoValue) outs.push_back(o);
        for (ValueId in : g_.node(n).inputs)
          if (in != kNoValue) inputs_of_removed_.push_back(in);
        g_.remove_node(n);
        res_.removed.push_back(n);
        left.erase(left.begin() + i);
        progress = true;
        break;
      }
      if (!progress) throw_internal("rule '" + r_.name + "': matched nodes form a cycle");
    }
    for (ValueId in : inputs_of_removed_)
      if (g_.value(in).alive && g_.value(in).is_constant_initializer() && g_.value(in).uses.empty() &&
          !g_.value(in).is_graph_output)
        g_.remove_value(in);
    for (ValueId o : outs) {
      Value& v = g_.value(o);
      if (v.alive && v.producer == kNoNode && v.uses.empty() && !v.is_graph_output && !v.is_graph_input && !v.constant)
        g_.remove_value(o);
    }
  }

  void finish() {
    for (const auto& r : renames_) {
      Value& v = g_.value(r.value);
      if (v.name != r.name && g_.find_value(r.name) == kNoValue) g_.rename_value(r.value, r.name);
      if (r.type.elem != DataType::Undefined) v.type = r.type;
    }
    for (ValueId v : new_values_)
      for (const Use& u : g_.value(v).uses) res_.touched.push_back(u.node);
    for (NodeId n : new_nodes_)
      for (ValueId in : g_.node(n).inputs)
        if (in != kNoValue && g_.value(in).producer != kNoNode) res_.touched.push_back(g_.value(in).producer);
    // A redefined output of a non-root node may have consumers placed before the root.
    bool reorder = false;
    for (const Redefinition& d : rw_.redefs)
      if (p_.vars[d.var].producer != p_.root) reorder = true;
    if (reorder) g_.topo_sort();
    std::sort(res_.touched.begin(), res_.touched.end());
    res_.touched.erase(std::unique(res_.touched.begin(), res_.touched.end()), res_.touched.end());
    res_.touched.erase(std::remove_if(res_.touched.begin(), res_.touched.end(),
                                      [&](NodeId n) { return !g_.node(n).alive; }),
                       res_.touched.end());
  }

  struct Rename {
    ValueId value;
    std::string name;
    ValueType type;
  };

  Graph& g_;
  const CompiledRule& cr_;
  const Rule& r_;
  const Pattern& p_;
  const Rewrite& rw_;
  const Match& m_;
  MatchEnv& env_;
  RewriteState& st_;
  const KernelGate* gate_ = nullptr;
  NodeId root_ = kNoNode;
  std::vector<NodeId> new_nodes_;
  std::vector<ValueId> new_values_;
  std::vector<ValueId> inputs_of_removed_;
  std::vector<Rename> renames_;
  ApplyResult res_;
};

}  // namespace

ApplyResult apply_rewrite(Graph& g, const CompiledRule& cr, const Match& m, MatchEnv& env, RewriteState& st,
                          const KernelGate* gate) {
  return Applier(g, cr, m, env, st, gate).run();
}

}  // namespace fusor
