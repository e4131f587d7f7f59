#include "dsl/expr_check.h"

#include <algorithm>

#include "dsl/suggest.h"

namespace fusor::dsl {

namespace {
std::string quote(const std::string& s) { return "'" + s + "'"; }
}  // namespace

ExprType ExprChecker::name_type(const NameExpr& n) {
  if (auto t = scope_.name(n)) return *t;
  if (dtype_from_rule_name(n.name) != DataType::Undefined) return ExprType::of(Kind::DType);
  if (catalog_.find("", n.name, scope_.opset()).status != OpLookup::UnknownOp) return ExprType::of(Kind::Op);
  scope_.unknown_name(n);
  return ExprType::of(Kind::Unknown);
}

ExprType ExprChecker::attr_read_type(const AttrReadExpr& a) {
  // `fusor.Gelu` in an expression is an op name, not an attribute read.
  if (!scope_.binds(a.base) && !a.base.empty() && catalog_.known_domain(a.base)) {
    scope_.op_name(OpRef{a.loc, a.base, a.attr});
    return ExprType::of(Kind::Op);
  }
  return scope_.attr_read(a);
}

ExprType ExprChecker::builtin_type(CallExpr& c) {
  const BuiltinSpec* spec = find_builtin(c.callee());
  if (!spec) {
    diags_.error(c.ops[0].loc, "unknown built-in function " + quote(c.callee()) + did_you_mean(c.callee(), builtin_names()));
    for (auto& a : c.args) check(*a);
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
      scope_.value_argument(c, a);
      continue;
    }
    ExprType t = check(a);
    if (k == ArgKind::IntArg && t.kind != Kind::Int && t.kind != Kind::Unknown)
      diags_.error(a.loc, c.callee() + "() takes an integer here, got " + t.str());
    if (k == ArgKind::ListArg && t.kind != Kind::List && t.kind != Kind::Unknown)
      diags_.error(a.loc, c.callee() + "() takes a list here, got " + t.str());
  }
  return spec->result;
}

void report_kind(Diagnostics& diags, const AstExpr& e, const std::string& what, const ExprType& t) {
  std::string hint;
  if (t.kind == Kind::Value) hint = "; read a tensor with scalar(x), value(x), shape(x), rank(x) or dtype(x)";
  diags.error(e.loc, what + ", got " + (t.kind == Kind::Value ? "a " : "") + t.str() + hint);
}

ExprType ExprChecker::check(AstExpr& e) {
  switch (e.kind) {
    case ExprKind::Int: return ExprType::of(Kind::Int);
    case ExprKind::Float: return ExprType::of(Kind::Float);
    case ExprKind::String: return ExprType::of(Kind::String);
    case ExprKind::List: {
      ExprType t = ExprType::of(Kind::List);
      bool first = true;
      for (auto& el : e.dyn<ListExpr>()->elements) {
        Kind k = check(*el).kind;
        if (first) t.elem = k;
        else if (t.elem == Kind::Int && k == Kind::Float) t.elem = Kind::Float;
        else if (!(t.elem == Kind::Float && k == Kind::Int) && t.elem != k) t.elem = Kind::Unknown;
        first = false;
      }
      return t;
    }
    case ExprKind::Name: return name_type(*e.dyn<NameExpr>());
    case ExprKind::Wildcard:
    case ExprKind::Optional:
    case ExprKind::Variadic:
      diags_.error(e.loc, std::string(e.kind == ExprKind::Wildcard ? "'_'" : e.kind == ExprKind::Optional ? "'x?'" : "'xs...'") +
                              " can only be an argument of an op in a match");
      return ExprType::of(Kind::Unknown);
    case ExprKind::AttrRead: return attr_read_type(*e.dyn<AttrReadExpr>());
    case ExprKind::Index: {
      auto& ix = *e.dyn<IndexExpr>();
      ExprType b = check(*ix.base);
      ExprType i = check(*ix.index);
      if (b.kind != Kind::List && b.kind != Kind::Unknown) kind_error(*ix.base, "only lists can be indexed", b);
      if (i.kind != Kind::Int && i.kind != Kind::Unknown) kind_error(*ix.index, "an index must be an integer", i);
      return ExprType::of(b.kind == Kind::List ? b.elem : Kind::Unknown);
    }
    case ExprKind::Unary: {
      auto& u = *e.dyn<UnaryExpr>();
      ExprType t = check(*u.operand);
      if (u.op == UnaryOp::Not) {
        if (t.kind != Kind::Bool && t.kind != Kind::Unknown) kind_error(*u.operand, "'!' needs a condition", t);
        return ExprType::of(Kind::Bool);
      }
      if (!t.is_number()) kind_error(*u.operand, "'-' needs a number", t);
      return t.is_number() ? t : ExprType::of(Kind::Unknown);
    }
    case ExprKind::Binary: return binary_type(*e.dyn<BinaryExpr>());
    case ExprKind::Coalesce:
      diags_.error(e.loc, "'?" "?' gives a fallback for an absent input of a rewrite op; it cannot be used here");
      return ExprType::of(Kind::Unknown);
    case ExprKind::Call: {
      auto& c = *e.dyn<CallExpr>();
      if (auto t = scope_.call(c)) return *t;
      return builtin_type(c);
    }
  }
  return ExprType::of(Kind::Unknown);
}

ExprType ExprChecker::binary_type(BinaryExpr& b) {
  ExprType l = check(*b.lhs), r = check(*b.rhs);
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

bool ExprChecker::comparable(const ExprType& a, const ExprType& b) {
  if (a.kind == Kind::Unknown || b.kind == Kind::Unknown) return true;
  if (a.is_number() && b.is_number()) return true;
  auto textish = [](Kind k) { return k == Kind::Op || k == Kind::String; };
  if (textish(a.kind) && textish(b.kind)) return true;
  // ONNX encodes element types as ints (Cast's `to`): dtype(x) == y.to.
  auto typeish = [](Kind k) { return k == Kind::DType || k == Kind::Int; };
  if (typeish(a.kind) && typeish(b.kind)) return true;
  return a.kind == b.kind;
}

}  // namespace fusor::dsl
