// Kinds of where-clause and attribute-value expressions: names, attribute reads, built-ins, operators.
#include "dsl/sema_checker.h"

namespace fusor::dsl::sema_detail {

bool Sema::is_value_name(const Scope& sc, const std::string& n) const {
  return sc.rewrite.count(n) || sc.match.count(n);
}

ExprType Sema::name_type(const NameExpr& n, const Scope& sc) {
  if (is_value_name(sc, n.name)) return ExprType::of(Kind::Value);
  if (dtype_from_rule_name(n.name) != DataType::Undefined) return ExprType::of(Kind::DType);
  if (catalog_.find("", n.name, opset_).status != OpLookup::UnknownOp) return ExprType::of(Kind::Op);
  report_unbound(n.name, n.loc, sc);
  return ExprType::of(Kind::Unknown);
}

void Sema::report_unbound(const std::string& name, const SourceLoc& loc, const Scope& sc) {
  auto later = sc.rewrite_later.find(name);
  if (later != sc.rewrite_later.end()) {
    diags_.error(loc, quote(name) + " is used before it is bound (by the statement at " + at(later->second) + ")");
    return;
  }
  std::vector<std::string> names;
  for (const auto& [k, v] : sc.match) names.push_back(k);
  for (const auto& [k, v] : sc.rewrite) names.push_back(k);
  diags_.error(loc, "unknown name " + quote(name) + ": it is not bound in the match" +
                        (place_ == Place::Rewrite ? " or earlier in the rewrite" : std::string()) +
                        did_you_mean(name, names));
}

const Binding* Sema::attr_base(const std::string& base, const SourceLoc& loc, const Scope& sc) {
  auto it = sc.match.find(base);
  if (it == sc.match.end()) {
    if (sc.rewrite.count(base))
      diags_.error(loc, quote(base) + " is defined by the rewrite; attribute reads refer to nodes of the match");
    else
      report_unbound(base, loc, sc);
    return nullptr;
  }
  if (!it->second.produced) {
    diags_.error(loc, quote(base) + " is an input of the match, not the output of a matched node, so it has no attributes");
    return nullptr;
  }
  return &it->second;
}

ExprType Sema::attr_read_type(const AttrReadExpr& a, const Scope& sc) {
  // `fusor.Gelu` in an expression is an op name, not an attribute read.
  if (!is_value_name(sc, a.base) && catalog_.known_domain(a.base) && !a.base.empty()) {
    lookup_op(OpRef{a.loc, a.base, a.attr});
    return ExprType::of(Kind::Op);
  }
  const Binding* b = attr_base(a.base, a.loc, sc);
  if (!b) return ExprType::of(Kind::Unknown);
  if (a.attr == "op") return ExprType::of(Kind::Op);
  if (a.attr == "attrs") return ExprType::of(Kind::Attrs);
  if (!b->producer || b->producer->call_kind != CallKind::Op) return ExprType::of(Kind::Unknown);
  auto it = ops_.find(b->producer);
  if (it == ops_.end()) return ExprType::of(Kind::Unknown);
  // In an alternation, an attribute only some alternatives have is fine (`y.op == LeakyRelu &&
  // y.alpha < 0.5`); one that none has is an error.
  ExprType t = ExprType::of(Kind::Unknown);
  bool found = false, known = false;
  std::vector<std::string> names;
  std::string ops_text;
  for (const OpInfo* op : it->second) {
    if (!op) continue;
    known = true;
    ops_text += (ops_text.empty() ? "" : " or ") + op->qualified();
    if (const AttrInfo* info = op->attr(a.attr)) {
      t = found && attr_expr_type(info->type).kind != t.kind ? ExprType::of(Kind::Unknown) : attr_expr_type(info->type);
      found = true;
    }
    for (const auto& x : op->attrs) names.push_back(x.name);
  }
  if (known && !found)
    diags_.error(a.attr_loc, ops_text + " has no attribute " + quote(a.attr) + did_you_mean(a.attr, names));
  return t;
}

ExprType Sema::builtin_type(CallExpr& c, const Scope& sc) {
  const BuiltinSpec* spec = find_builtin(c.callee());
  if (!spec) {
    diags_.error(c.ops[0].loc, "unknown built-in function " + quote(c.callee()) + did_you_mean(c.callee(), builtin_names()));
    for (auto& a : c.args) expr_type(*a, sc);
    return ExprType::of(Kind::Unknown);
  }
  const size_t n = c.args.size(), fixed = spec->args.size();
  if ((!spec->variadic && n != fixed) || (spec->variadic && n < fixed)) {
    std::string want = (spec->variadic ? "at least " : "") + std::to_string(fixed) + " argument" + (fixed == 1 ? "" : "s");
    diags_.error(c.loc, "built-in function " + quote(c.callee()) + " takes " + want + ", got " + std::to_string(n));
    return spec->result;
  }
  for (size_t i = 0; i < n; ++i) {
    ArgKind k = spec->args[std::min(i, fixed - 1)];
    AstExpr& a = *c.args[i];
    if (k == ArgKind::ValueName) {
      auto* nm = a.dyn<NameExpr>();
      if (!nm) {
        diags_.error(a.loc, c.callee() + "() takes value names from the match");
      } else if (!is_value_name(sc, nm->name)) {
        report_unbound(nm->name, nm->loc, sc);
      } else if (c.callee() == "absent" && !(sc.match.count(nm->name) && sc.match.at(nm->name).optional)) {
        diags_.error(a.loc, "absent() needs an optional input, matched as " + quote(nm->name + "?"));
      }
      continue;
    }
    ExprType t = expr_type(a, sc);
    if (k == ArgKind::IntArg && t.kind != Kind::Int && t.kind != Kind::Unknown)
      diags_.error(a.loc, c.callee() + "() takes an integer here, got " + t.str());
    if (k == ArgKind::ListArg && t.kind != Kind::List && t.kind != Kind::Unknown)
      diags_.error(a.loc, c.callee() + "() takes a list here, got " + t.str());
  }
  return spec->result;
}

void Sema::kind_error(const AstExpr& e, const std::string& what, const ExprType& t) {
  std::string hint;
  if (t.kind == Kind::Value) hint = "; read a tensor with scalar(x), value(x), shape(x), rank(x) or dtype(x)";
  diags_.error(e.loc, what + ", got " + (t.kind == Kind::Value ? "a " : "") + t.str() + hint);
}

ExprType Sema::expr_type(AstExpr& e, const Scope& sc) {
  switch (e.kind) {
    case ExprKind::Int: return ExprType::of(Kind::Int);
    case ExprKind::Float: return ExprType::of(Kind::Float);
    case ExprKind::String: return ExprType::of(Kind::String);
    case ExprKind::List: {
      ExprType t = ExprType::of(Kind::List);
      bool first = true;
      for (auto& el : e.dyn<ListExpr>()->elements) {
        ExprType et = expr_type(*el, sc);
        Kind k = et.kind;
        if (first) t.elem = k;
        else if (t.elem == Kind::Int && k == Kind::Float) t.elem = Kind::Float;
        else if (!(t.elem == Kind::Float && k == Kind::Int) && t.elem != k) t.elem = Kind::Unknown;
        first = false;
      }
      return t;
    }
    case ExprKind::Name: return name_type(*e.dyn<NameExpr>(), sc);
    case ExprKind::Wildcard:
    case ExprKind::Optional:
    case ExprKind::Variadic:
      diags_.error(e.loc, std::string(e.kind == ExprKind::Wildcard ? "'_'" : e.kind == ExprKind::Optional ? "'x?'" : "'xs...'") +
                              " can only be an argument of an op in a match");
      return ExprType::of(Kind::Unknown);
    case ExprKind::AttrRead: return attr_read_type(*e.dyn<AttrReadExpr>(), sc);
    case ExprKind::Index: {
      auto& ix = *e.dyn<IndexExpr>();
      ExprType b = expr_type(*ix.base, sc);
      ExprType i = expr_type(*ix.index, sc);
      if (b.kind != Kind::List && b.kind != Kind::Unknown) kind_error(*ix.base, "only lists can be indexed", b);
      if (i.kind != Kind::Int && i.kind != Kind::Unknown) kind_error(*ix.index, "an index must be an integer", i);
      return ExprType::of(b.kind == Kind::List ? b.elem : Kind::Unknown);
    }
    case ExprKind::Unary: {
      auto& u = *e.dyn<UnaryExpr>();
      ExprType t = expr_type(*u.operand, sc);
      if (u.op == UnaryOp::Not) {
        if (t.kind != Kind::Bool && t.kind != Kind::Unknown) kind_error(*u.operand, "'!' needs a condition", t);
        return ExprType::of(Kind::Bool);
      }
      if (!t.is_number()) kind_error(*u.operand, "'-' needs a number", t);
      return t.is_number() ? t : ExprType::of(Kind::Unknown);
    }
    case ExprKind::Binary: return binary_type(*e.dyn<BinaryExpr>(), sc);
    case ExprKind::Coalesce:
      diags_.error(e.loc, "'?" "?' gives a fallback for an absent input of a rewrite op; it cannot be used here");
      return ExprType::of(Kind::Unknown);
    case ExprKind::Call: {
      auto& c = *e.dyn<CallExpr>();
      resolve(c, place_ == Place::Match ? Place::Where : place_);
      if (c.call_kind == CallKind::Builtin) return builtin_type(c, sc);
      if (c.call_kind == CallKind::Pattern) {
        diags_.error(c.loc, "pattern " + quote(c.callee()) + " can only be called in a match");
        return ExprType::of(Kind::Unknown);
      }
      diags_.error(c.loc, "an op call is not allowed here; conditions use built-in functions (" +
                              std::string("const, rank, dtype, shape, uses, ...)"));
      return ExprType::of(Kind::Unknown);
    }
  }
  return ExprType::of(Kind::Unknown);
}

ExprType Sema::binary_type(BinaryExpr& b, const Scope& sc) {
  ExprType l = expr_type(*b.lhs, sc), r = expr_type(*b.rhs, sc);
  const std::string op = quote(binary_op_spelling(b.op));
  auto unknown = [](const ExprType& t) { return t.kind == Kind::Unknown; };
  switch (b.op) {
    case BinaryOp::And:
    case BinaryOp::Or:
      if (l.kind != Kind::Bool && !unknown(l)) kind_error(*b.lhs, op + " needs conditions on both sides", l);
      if (r.kind != Kind::Bool && !unknown(r)) kind_error(*b.rhs, op + " needs conditions on both sides", r);
      return ExprType::of(Kind::Bool);
    case BinaryOp::Eq:
    case BinaryOp::Ne: {
      if (l.kind == Kind::Value || r.kind == Kind::Value)
        diags_.error((l.kind == Kind::Value ? b.lhs : b.rhs)->loc,
                     "a tensor value cannot be compared; read it with scalar(x), value(x), shape(x), rank(x) or dtype(x)");
      else if (!comparable(l, r))
        diags_.error(b.loc, "cannot compare " + l.str() + " with " + r.str());
      return ExprType::of(Kind::Bool);
    }
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
      if (!l.is_number()) kind_error(*b.lhs, op + " compares numbers", l);
      else if (!r.is_number()) kind_error(*b.rhs, op + " compares numbers", r);
      return ExprType::of(Kind::Bool);
    case BinaryOp::In:
      if (l.kind == Kind::Value) kind_error(*b.lhs, "'in' tests a number, op or type", l);
      if (r.kind != Kind::List && !unknown(r)) kind_error(*b.rhs, "'in' needs a list on its right", r);
      else if (r.kind == Kind::List && r.elem != Kind::Unknown && !unknown(l) &&
               !comparable(l, ExprType::of(r.elem)))
        diags_.error(b.loc, "cannot look for " + l.str() + " in a " + r.str());
      return ExprType::of(Kind::Bool);
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod: {
      const std::string hint = l.kind == Kind::Value || r.kind == Kind::Value
                                   ? " (arithmetic on tensors is written with ops: Add, Sub, Mul, Div)"
                                   : "";
      if (!l.is_number()) {
        diags_.error(b.lhs->loc, op + " needs numbers, got " + (l.kind == Kind::Value ? "a " : "") + l.str() + hint);
        return ExprType::of(Kind::Unknown);
      }
      if (!r.is_number()) {
        diags_.error(b.rhs->loc, op + " needs numbers, got " + (r.kind == Kind::Value ? "a " : "") + r.str() + hint);
        return ExprType::of(Kind::Unknown);
      }
      if (unknown(l) || unknown(r)) return ExprType::of(Kind::Unknown);
      return ExprType::of(l.kind == Kind::Float || r.kind == Kind::Float || b.op == BinaryOp::Div ? Kind::Float : Kind::Int);
    }
  }
  return ExprType::of(Kind::Unknown);
}

bool Sema::comparable(const ExprType& a, const ExprType& b) {
  if (a.kind == Kind::Unknown || b.kind == Kind::Unknown) return true;
  if (a.is_number() && b.is_number()) return true;
  auto textish = [](Kind k) { return k == Kind::Op || k == Kind::String; };
  if (textish(a.kind) && textish(b.kind)) return true;
  // ONNX encodes element types as ints (Cast's `to`): dtype(x) == y.to.
  auto typeish = [](Kind k) { return k == Kind::DType || k == Kind::Int; };
  if (typeish(a.kind) && typeish(b.kind)) return true;
  return a.kind == b.kind;
}

}  // namespace fusor::dsl::sema_detail
