#include "engine/rewrite/kernel_gate.h"

#include <algorithm>
#include <cmath>

#include "dsl/op_catalog.h"
#include "dsl/printer.h"
#include "engine/rewrite/graph_util.h"
#include "engine/rewrite/predicate.h"

namespace fusor {

namespace {

using K = PValue::Kind;

// An op as the rule language spells it: "Conv", "fusor.FusedConv".
std::string rule_spelling(OpType op) { return op.domain().empty() ? op.name() : op.domain() + "." + op.name(); }

bool textual(const PValue& v) { return v.kind == K::Op || v.kind == K::Str; }

// An op name written in a condition equals a string attribute naming that op in either
// spelling ("Relu"; "fusor.Gelu" or "fusor::Gelu").
bool same_text(const PValue& a, const PValue& b) {
  if (a.kind == K::Op && b.kind == K::Op) return a.op == b.op;
  const PValue& op = a.kind == K::Op ? a : b;
  const PValue& str = a.kind == K::Op ? b : a;
  if (op.kind != K::Op) return a.str == b.str;
  return str.str == rule_spelling(op.op) || str.str == op.op.qualified();
}

// Three-valued equality: `unknown` is set when either side is (partly) unknown. Unlike a where
// clause's `==` (predicate.cpp), numbers compare with the literal tolerance: a float attribute
// (alpha = 0.2f) is compared with a decimal literal (0.2) here.
bool same(const PValue& a, const PValue& b, bool& unknown) {
  if (a.kind == K::Unknown || b.kind == K::Unknown) {
    unknown = true;
    return false;
  }
  if (textual(a) && textual(b)) return same_text(a, b);
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case K::Bool: return a.b == b.b;
    case K::Num: return a.num == b.num || std::fabs(a.num - b.num) <= 1e-6 * std::max(1.0, std::fabs(b.num));
    case K::DType: return a.dtype == b.dtype;
    case K::List: {
      if (a.list.size() != b.list.size()) return false;
      bool all = true;
      for (size_t i = 0; i < a.list.size(); ++i) all = same(a.list[i], b.list[i], unknown) && all;
      return all;
    }
    default: return false;
  }
}

// Evaluates one kernel condition over one node, remembering the attributes it read (for the
// message saying why no declaration covers the node).
class ConditionEval {
 public:
  ConditionEval(MatchEnv& env, NodeId n) : env_(env), n_(n), node_(env.graph.node(n)) {}

  PValue eval(const dsl::AstExpr& e) {
    using dsl::ExprKind;
    switch (e.kind) {
      case ExprKind::Int: return PValue::number(static_cast<double>(e.dyn<dsl::IntExpr>()->value));
      case ExprKind::Float: return PValue::number(e.dyn<dsl::FloatExpr>()->value);
      case ExprKind::String: {
        PValue p;
        p.kind = K::Str;
        p.str = e.dyn<dsl::StringExpr>()->value;
        return p;
      }
      case ExprKind::List: {
        PValue p;
        p.kind = K::List;
        for (const auto& el : e.dyn<dsl::ListExpr>()->elements) p.list.push_back(eval(*el));
        return p;
      }
      case ExprKind::Name: return name(e.dyn<dsl::NameExpr>()->name);
      case ExprKind::AttrRead: {  // a qualified op name: fusor.Gelu
        const auto& a = *e.dyn<dsl::AttrReadExpr>();
        PValue p;
        p.kind = K::Op;
        p.op = OpType(a.base, a.attr);
        return p;
      }
      case ExprKind::Unary: {
        const auto& u = *e.dyn<dsl::UnaryExpr>();
        PValue v = eval(*u.operand);
        if (u.op == dsl::UnaryOp::Not) return v.kind == K::Bool ? PValue::boolean(!v.b) : PValue::unknown();
        return v.kind == K::Num ? PValue::number(-v.num) : PValue::unknown();
      }
      case ExprKind::Index: {
        const auto& ix = *e.dyn<dsl::IndexExpr>();
        PValue l = eval(*ix.base), i = eval(*ix.index);
        if (l.kind != K::List || i.kind != K::Num) return PValue::unknown();
        auto idx = static_cast<int64_t>(i.num), size = static_cast<int64_t>(l.list.size());
        if (idx < 0) idx += size;
        return idx >= 0 && idx < size ? l.list[idx] : PValue::unknown();
      }
      case ExprKind::Binary: return binary(*e.dyn<dsl::BinaryExpr>());
      default: return PValue::unknown();
    }
  }

  // "activation = Sigmoid, group = 1": the node's facts the condition read.
  std::string facts() const {
    std::string s;
    for (const auto& [name, value] : read_) s += (s.empty() ? "" : ", ") + name + " = " + value;
    return s;
  }

 private:
  PValue name(const std::string& n) {
    std::optional<Attribute> attr = read_node_attr(env_, n_, n);
    if (attr) return note(n, attr_to_pvalue(*attr));
    if (onnx_attr_kind(node_.op, n, env_.opset) != AttrKind::Undefined) return note(n, PValue::unknown());
    if (n == "input_dtype" || n == "input_rank") {
      ValueId in = node_.inputs.empty() ? kNoValue : node_.inputs[0];
      PValue p;
      if (in != kNoValue && n == "input_dtype" && env_.graph.value(in).type.elem != DataType::Undefined) {
        p.kind = K::DType;
        p.dtype = env_.graph.value(in).type.elem;
      } else if (in != kNoValue && n == "input_rank" && env_.graph.value(in).type.rank() >= 0) {
        p = PValue::number(env_.graph.value(in).type.rank());
      }
      return note(n, p);
    }
    if (DataType t = dsl::dtype_from_rule_name(n); t != DataType::Undefined) {
      PValue p;
      p.kind = K::DType;
      p.dtype = t;
      return p;
    }
    PValue p;
    p.kind = K::Op;
    p.op = OpType::onnx(n);
    return p;
  }

  PValue note(const std::string& n, PValue v) {
    bool seen = false;
    for (const auto& r : read_) seen |= r.first == n;
    std::string shown = v.kind == K::Str ? "\"" + v.str + "\"" : v.repr();
    if (!seen) read_.push_back({n, shown});
    return v;
  }

  PValue binary(const dsl::BinaryExpr& b) {
    using dsl::BinaryOp;
    PValue l = eval(*b.lhs);
    if (b.op == BinaryOp::And || b.op == BinaryOp::Or) {
      PValue r = eval(*b.rhs);
      bool is_and = b.op == BinaryOp::And;
      // A known deciding side wins over an unknown other side.
      for (const PValue* v : {&l, &r})
        if (v->kind == K::Bool && v->b != is_and) return PValue::boolean(!is_and);
      if (l.kind == K::Bool && r.kind == K::Bool) return PValue::boolean(is_and);
      return PValue::unknown();
    }
    PValue r = eval(*b.rhs);
    bool unknown = false;
    switch (b.op) {
      case BinaryOp::Eq:
      case BinaryOp::Ne: {
        bool eq = same(l, r, unknown);
        if (unknown) return PValue::unknown();
        return PValue::boolean(b.op == BinaryOp::Eq ? eq : !eq);
      }
      case BinaryOp::In: {
        if (r.kind != K::List) return PValue::unknown();
        for (const PValue& el : r.list)
          if (same(l, el, unknown)) return PValue::boolean(true);
        return unknown ? PValue::unknown() : PValue::boolean(false);
      }
      default: break;
    }
    if (l.kind != K::Num || r.kind != K::Num) return PValue::unknown();
    switch (b.op) {
      case BinaryOp::Lt: return PValue::boolean(l.num < r.num);
      case BinaryOp::Le: return PValue::boolean(l.num <= r.num);
      case BinaryOp::Gt: return PValue::boolean(l.num > r.num);
      case BinaryOp::Ge: return PValue::boolean(l.num >= r.num);
      case BinaryOp::Add: return PValue::number(l.num + r.num);
      case BinaryOp::Sub: return PValue::number(l.num - r.num);
      case BinaryOp::Mul: return PValue::number(l.num * r.num);
      case BinaryOp::Div: return r.num == 0 ? PValue::unknown() : PValue::number(l.num / r.num);
      case BinaryOp::Mod: return r.num == 0 ? PValue::unknown() : PValue::number(std::fmod(l.num, r.num));
      default: return PValue::unknown();
    }
  }

  MatchEnv& env_;
  NodeId n_;
  const Node& node_;
  std::vector<std::pair<std::string, std::string>> read_;
};

}  // namespace

std::string KernelGate::cannot_run(MatchEnv& env, NodeId n) const {
  if (!restricts()) return "";
  const Node& node = env.graph.node(n);
  const std::string op = rule_spelling(node.op);
  std::vector<const dsl::KernelDecl*> decls = def_.kernels_for(node.op.domain(), node.op.name());
  if (decls.empty()) return "provider '" + def_.name + "' has no kernel for " + op;
  env.norm.invalidate(n);  // a new node may reuse the id of one normalized before
  ConditionEval ev(env, n);
  std::string declared;
  for (const dsl::KernelDecl* d : decls) {
    if (!d->where) return "";
    PValue v = ev.eval(*d->where);
    if (v.kind == K::Bool && v.b) return "";
    declared += (declared.empty() ? "" : "; ") + op + " where " + dsl::print_expr(*d->where) + " at " +
                d->loc.file + ":" + std::to_string(d->loc.line);
  }
  std::string facts = ev.facts();
  return "provider '" + def_.name + "' has no kernel for " + op + (facts.empty() ? "" : " with " + facts) +
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
