#include "engine/rewrite/predicate.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/rewrite/graph_util.h"

namespace fusor {

using K = PValue::Kind;

bool PValue::known() const {
  if (kind == K::Unknown || kind == K::Sym) return false;  // a symbol has no value
  for (const auto& x : list)
    if (!x.known()) return false;
  return true;
}

std::string PValue::repr() const {
  std::ostringstream os;
  switch (kind) {
    case K::Unknown: return "?";
    case K::Bool: return b ? "true" : "false";
    case K::Num: os << num; return os.str();
    case K::Op: return op.qualified();
    case K::DType: return dtype_name(dtype);
    case K::Str: return str;
    case K::Sym: return str;
    case K::List:
      os << '[';
      for (size_t i = 0; i < list.size(); ++i) os << (i ? ", " : "") << list[i].repr();
      os << ']';
      return os.str();
  }
  return "?";
}

PValue attr_to_pvalue(const Attribute& a) {
  PValue p;
  switch (a.kind) {
    case AttrKind::Int: return PValue::number(static_cast<double>(a.i));
    case AttrKind::Float: return PValue::number(a.f);
    case AttrKind::String: p.kind = K::Str; p.str = a.s; return p;
    case AttrKind::Ints: p.kind = K::List; for (int64_t v : a.ints) p.list.push_back(PValue::number(static_cast<double>(v))); return p;
    case AttrKind::Floats: p.kind = K::List; for (float v : a.floats) p.list.push_back(PValue::number(v)); return p;
    default: return PValue::unknown();
  }
}

std::optional<Attribute> read_node_attr(MatchEnv& env, NodeId n, const std::string& name) {
  const NormalizedNode& nn = env.norm.get(n);
  if (const Attribute* a = nn.attr(name)) return *a;
  auto d = onnx_attr_default(env.graph.node(n).op, name, env.opset);
  if (d) {
    const Node& node = env.graph.node(n);
    int rank = !node.inputs.empty() && node.inputs[0] != kNoValue ? env.graph.value(node.inputs[0]).type.rank() : -1;
    normalize_axis_attr(*d, rank);
  }
  return d;
}

// An op equals a string naming it as the rule language does ("Relu", "fusor.Gelu"), or as models
// saved before that spelling carry it ("fusor::Gelu").
static bool names_op(const std::string& s, OpType op) {
  if (op.domain().empty()) return s == op.name();
  return s == op.domain() + "." + op.name() || s == op.domain() + "::" + op.name();
}

// Two integers compare exactly; otherwise within the literal tolerance, so a float32 attribute
// (alpha = 0.2f) equals the literal 0.2.
static bool same_number(double a, double b) {
  if (a == b) return true;
  if (std::floor(a) == a && std::floor(b) == b) return false;
  return within_literal_tolerance(a, b) || within_literal_tolerance(b, a);
}

// Three-valued equality: `unknown` is set when either side is (partly) unknown. Two symbols are
// equal when they are the same dim_param; anything else about a symbol is unknown.
static bool pequal(const PValue& a, const PValue& b, bool& unknown) {
  if (a.kind == K::Unknown || b.kind == K::Unknown) { unknown = true; return false; }
  if (a.kind == K::Sym || b.kind == K::Sym) {
    if (a.kind == K::Sym && b.kind == K::Sym && a.str == b.str) return true;
    unknown = true;
    return false;
  }
  if ((a.kind == K::Op || a.kind == K::Str) && (b.kind == K::Op || b.kind == K::Str)) {
    if (a.kind == K::Op && b.kind == K::Op) return a.op == b.op;
    if (a.kind == K::Str && b.kind == K::Str) return a.str == b.str;
    return a.kind == K::Op ? names_op(b.str, a.op) : names_op(a.str, b.op);
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case K::Bool: return a.b == b.b;
    case K::Num: return same_number(a.num, b.num);
    case K::DType: return a.dtype == b.dtype;
    case K::List: {
      if (a.list.size() != b.list.size()) return false;
      bool all = true;
      for (size_t i = 0; i < a.list.size(); ++i) all = pequal(a.list[i], b.list[i], unknown) && all;
      return all;
    }
    default: return false;
  }
}

static bool as_perm(const PValue& v, std::vector<int64_t>& out) {
  if (v.kind != K::List || !v.known()) return false;
  out.clear();
  for (const auto& x : v.list) {
    if (x.kind != K::Num) return false;
    out.push_back(static_cast<int64_t>(x.num));
  }
  for (int64_t x : out)
    if (x < 0 || x >= static_cast<int64_t>(out.size())) return false;
  return true;
}

static PValue int_list(const std::vector<int64_t>& v) {
  PValue p;
  p.kind = K::List;
  for (int64_t x : v) p.list.push_back(PValue::number(static_cast<double>(x)));
  return p;
}

PValue eval_expr(const Expr& e, const Pattern& pat, const Match& m, MatchEnv& env) {
  const Graph& g = env.graph;
  auto value_of = [&](int var) -> ValueId { return var >= 0 && m.bound[var] ? m.vars[var] : kNoValue; };
  auto kid = [&](size_t i) { return eval_expr(e.kids.at(i), pat, m, env); };
  switch (e.op) {
    case Expr::Op::Number: return PValue::number(e.number);
    case Expr::Op::Bool: return PValue::boolean(e.boolean);
    case Expr::Op::String: { PValue p; p.kind = K::Str; p.str = e.name; return p; }
    case Expr::Op::List: {
      PValue p; p.kind = K::List;
      for (const auto& k : e.kids) p.list.push_back(eval_expr(k, pat, m, env));
      return p;
    }
    case Expr::Op::OpName: { PValue p; p.kind = K::Op; p.op = e.optype; return p; }
    case Expr::Op::DTypeName: { PValue p; p.kind = K::DType; p.dtype = e.dtype; return p; }
    case Expr::Op::Var: return PValue::unknown();
    case Expr::Op::IsConst: {
      for (const Expr& k : e.kids) {
        int var = k.var;
        if (var < 0 || !m.bound[var]) return PValue::boolean(false);
        if (m.vars[var] == kNoValue) continue;  // an absent optional input is constant
        if (!constant_of(g, m.vars[var])) return PValue::boolean(false);
      }
      return PValue::boolean(true);
    }
    case Expr::Op::Rank: {
      ValueId v = value_of(e.var);
      if (v == kNoValue) return PValue::unknown();
      int r = g.value(v).type.rank();
      return r < 0 ? PValue::unknown() : PValue::number(r);
    }
    case Expr::Op::DType: {
      ValueId v = value_of(e.var);
      if (v == kNoValue || g.value(v).type.elem == DataType::Undefined) return PValue::unknown();
      PValue p; p.kind = K::DType; p.dtype = g.value(v).type.elem;
      return p;
    }
    case Expr::Op::Shape: {
      ValueId v = value_of(e.var);
      if (v == kNoValue || !g.value(v).type.has_shape) return PValue::unknown();
      PValue p; p.kind = K::List;
      for (const Dim& d : g.value(v).type.dims)
        p.list.push_back(d.is_known()       ? PValue::number(static_cast<double>(d.value))
                         : d.param.empty() ? PValue::unknown()
                                           : PValue::symbol(d.param));
      return p;
    }
    case Expr::Op::Uses: {
      ValueId v = value_of(e.var);
      if (v == kNoValue) return PValue::number(0);
      return PValue::number(static_cast<double>(g.value(v).uses.size() + (g.value(v).is_graph_output ? 1 : 0)));
    }
    case Expr::Op::Scalar: {
      ValueId v = value_of(e.var);
      TensorPtr t = constant_of(g, v);
      if (!t || t->numel() != 1 || t->dtype() == DataType::String) return PValue::unknown();
      return PValue::number(t->as_double(0));
    }
    case Expr::Op::AttrRead: {
      ValueId v = value_of(e.var);
      if (v == kNoValue || g.value(v).producer == kNoNode) return PValue::unknown();
      auto a = read_node_attr(env, g.value(v).producer, e.name);
      return a ? attr_to_pvalue(*a) : PValue::unknown();
    }
    case Expr::Op::OpOf: {
      ValueId v = value_of(e.var);
      if (v == kNoValue || g.value(v).producer == kNoNode) return PValue::unknown();
      PValue p; p.kind = K::Op; p.op = g.node(g.value(v).producer).op;
      return p;
    }
    case Expr::Op::Opset: return env.opset > 0 ? PValue::number(static_cast<double>(env.opset)) : PValue::unknown();
    case Expr::Op::Index: {
      PValue l = kid(0), i = kid(1);
      if (l.kind != K::List || i.kind != K::Num) return PValue::unknown();
      int64_t idx = static_cast<int64_t>(i.num), n = static_cast<int64_t>(l.list.size());
      if (idx < 0) idx += n;
      if (idx < 0 || idx >= n) return PValue::unknown();
      return l.list[idx];
    }
    case Expr::Op::Add: case Expr::Op::Sub: case Expr::Op::Mul: case Expr::Op::Div: case Expr::Op::Mod: {
      PValue a = kid(0), b = kid(1);
      if (a.kind != K::Num || b.kind != K::Num) return PValue::unknown();
      switch (e.op) {
        case Expr::Op::Add: return PValue::number(a.num + b.num);
        case Expr::Op::Sub: return PValue::number(a.num - b.num);
        case Expr::Op::Mul: return PValue::number(a.num * b.num);
        case Expr::Op::Div: return b.num == 0 ? PValue::unknown() : PValue::number(a.num / b.num);
        default: return b.num == 0 ? PValue::unknown() : PValue::number(std::fmod(a.num, b.num));
      }
    }
    case Expr::Op::Neg: {
      PValue a = kid(0);
      return a.kind == K::Num ? PValue::number(-a.num) : PValue::unknown();
    }
    case Expr::Op::Eq: case Expr::Op::Ne: {
      bool unknown = false;
      bool eq = pequal(kid(0), kid(1), unknown);
      if (unknown) return PValue::unknown();
      return PValue::boolean(e.op == Expr::Op::Eq ? eq : !eq);
    }
    case Expr::Op::Lt: case Expr::Op::Le: case Expr::Op::Gt: case Expr::Op::Ge: {
      PValue a = kid(0), b = kid(1);
      if (a.kind != K::Num || b.kind != K::Num) return PValue::unknown();
      switch (e.op) {
        case Expr::Op::Lt: return PValue::boolean(a.num < b.num);
        case Expr::Op::Le: return PValue::boolean(a.num <= b.num);
        case Expr::Op::Gt: return PValue::boolean(a.num > b.num);
        default: return PValue::boolean(a.num >= b.num);
      }
    }
    case Expr::Op::And: {
      bool unknown = false;
      for (size_t i = 0; i < e.kids.size(); ++i) {
        PValue a = kid(i);
        if (a.kind == K::Bool && !a.b) return PValue::boolean(false);
        if (a.kind != K::Bool) unknown = true;
      }
      return unknown ? PValue::unknown() : PValue::boolean(true);
    }
    case Expr::Op::Or: {
      bool unknown = false;
      for (size_t i = 0; i < e.kids.size(); ++i) {
        PValue a = kid(i);
        if (a.kind == K::Bool && a.b) return PValue::boolean(true);
        if (a.kind != K::Bool) unknown = true;
      }
      return unknown ? PValue::unknown() : PValue::boolean(false);
    }
    case Expr::Op::Not: {
      PValue a = kid(0);
      return a.kind == K::Bool ? PValue::boolean(!a.b) : PValue::unknown();
    }
    case Expr::Op::In: {
      PValue x = kid(0), l = kid(1);
      if (l.kind != K::List) return PValue::unknown();
      bool unknown = false;
      for (const auto& item : l.list)
        if (pequal(x, item, unknown)) return PValue::boolean(true);
      return unknown ? PValue::unknown() : PValue::boolean(false);
    }
    case Expr::Op::Compose: {
      std::vector<int64_t> a, b;
      if (!as_perm(kid(0), a) || !as_perm(kid(1), b) || a.size() != b.size()) return PValue::unknown();
      std::vector<int64_t> c(a.size());
      for (size_t i = 0; i < a.size(); ++i) c[i] = a[b[i]];
      return int_list(c);
    }
    case Expr::Op::Iota: {
      PValue n = kid(0);
      if (n.kind != K::Num || n.num < 0) return PValue::unknown();
      std::vector<int64_t> v(static_cast<size_t>(n.num));
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(i);
      return int_list(v);
    }
    case Expr::Op::Inverse: {
      std::vector<int64_t> a;
      if (!as_perm(kid(0), a)) return PValue::unknown();
      std::vector<int64_t> inv(a.size());
      for (size_t i = 0; i < a.size(); ++i) inv[a[i]] = static_cast<int64_t>(i);
      return int_list(inv);
    }
    case Expr::Op::Permute: {
      PValue xs = kid(0);
      std::vector<int64_t> perm;
      if (xs.kind != K::List || !as_perm(kid(1), perm) || perm.size() != xs.list.size()) return PValue::unknown();
      PValue r; r.kind = K::List;
      for (int64_t i : perm) r.list.push_back(xs.list[i]);
      return r;
    }
    case Expr::Op::RemapAxes: {
      PValue axes = kid(0);
      std::vector<int64_t> perm;
      if (axes.kind != K::List || !axes.known() || !as_perm(kid(1), perm)) return PValue::unknown();
      std::vector<int64_t> r;
      for (const PValue& a : axes.list) {
        auto it = std::find(perm.begin(), perm.end(), static_cast<int64_t>(a.num));
        if (it == perm.end()) return PValue::unknown();
        r.push_back(it - perm.begin());
      }
      return int_list(r);
    }
    case Expr::Op::Absent: {
      int var = e.var >= 0 ? e.var : (e.kids.empty() ? -1 : e.kids[0].var);
      return PValue::boolean(var >= 0 && m.is_absent(var));
    }
    case Expr::Op::ValueOf: {
      TensorPtr t = constant_of(g, value_of(e.var));
      if (!t || t->dtype() == DataType::String || t->numel() > 1 << 16) return PValue::unknown();
      PValue r; r.kind = K::List;
      for (int64_t i = 0; i < t->numel(); ++i) r.list.push_back(PValue::number(t->as_double(i)));
      return r;
    }
    case Expr::Op::Len: {
      PValue l = kid(0);
      return l.kind == K::List ? PValue::number(static_cast<double>(l.list.size())) : PValue::unknown();
    }
  }
  return PValue::unknown();
}

bool eval_predicate(const Expr& e, const Pattern& p, const Match& m, MatchEnv& env) {
  PValue v = eval_expr(e, p, m, env);
  return v.kind == K::Bool && v.b;
}

std::optional<Attribute> pvalue_to_attr(const PValue& v, const std::string& name, AttrKind kind) {
  switch (v.kind) {
    case K::Num:
      if (kind == AttrKind::Float || (kind == AttrKind::Undefined && std::floor(v.num) != v.num))
        return Attribute::make_float(name, static_cast<float>(v.num));
      return Attribute::make_int(name, static_cast<int64_t>(v.num));
    case K::Bool: return Attribute::make_int(name, v.b ? 1 : 0);
    case K::Str: return Attribute::make_string(name, v.str);
    case K::Op: return Attribute::make_string(name, v.op.name());
    case K::DType: return Attribute::make_int(name, static_cast<int64_t>(v.dtype));
    case K::List: {
      if (!v.known()) return std::nullopt;
      bool integral = true;
      for (const auto& x : v.list) {
        if (x.kind != K::Num) return std::nullopt;
        integral = integral && std::floor(x.num) == x.num;
      }
      if (kind == AttrKind::Floats || (kind == AttrKind::Undefined && !integral)) {
        std::vector<float> f;
        for (const auto& x : v.list) f.push_back(static_cast<float>(x.num));
        return Attribute::make_floats(name, f);
      }
      std::vector<int64_t> i;
      for (const auto& x : v.list) i.push_back(static_cast<int64_t>(x.num));
      return Attribute::make_ints(name, i);
    }
    default: return std::nullopt;
  }
}

}  // namespace fusor
