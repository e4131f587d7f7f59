#include "dsl/lower_expr.h"

#include <map>

#include "core/ir/dtype.h"

namespace fusor::dsl {

namespace {

Expr lower_builtin(const CallExpr& c, const ExprVars& vars) {
  if (c.call_kind != CallKind::Builtin) throw LowerError{c.loc, "an op call cannot appear in a condition"};
  const std::string& f = c.callee();
  auto kids = [&] {
    std::vector<Expr> k;
    for (const auto& a : c.args) k.push_back(lower_expr(*a, vars));
    return k;
  };
  static const std::map<std::string, Expr::Op> of_value = {
      {"rank", Expr::Op::Rank},     {"dtype", Expr::Op::DType},   {"shape", Expr::Op::Shape}, {"uses", Expr::Op::Uses},
      {"scalar", Expr::Op::Scalar}, {"value", Expr::Op::ValueOf}, {"absent", Expr::Op::Absent}};
  static const std::map<std::string, Expr::Op> of_kids = {
      {"compose", Expr::Op::Compose}, {"inverse", Expr::Op::Inverse}, {"iota", Expr::Op::Iota},
      {"len", Expr::Op::Len},         {"permute", Expr::Op::Permute}, {"remap_axes", Expr::Op::RemapAxes}};
  if (f == "const") {
    std::vector<Expr> k;
    for (const auto& a : c.args) k.push_back(Expr::of_var(Expr::Op::Var, vars.value_var(*a)));
    return Expr::call(Expr::Op::IsConst, std::move(k));
  }
  if (f == "opset") return Expr::call(Expr::Op::Opset, {});
  if (auto it = of_value.find(f); it != of_value.end()) return Expr::of_var(it->second, vars.value_var(*c.args.at(0)));
  if (auto it = of_kids.find(f); it != of_kids.end()) return Expr::call(it->second, kids());
  throw LowerError{c.loc, "the engine has no built-in '" + f + "'"};
}

}  // namespace

Expr lower_expr(const AstExpr& e, const ExprVars& vars) {
  switch (e.kind) {
    case ExprKind::Int: return Expr::num(static_cast<double>(e.dyn<IntExpr>()->value));
    case ExprKind::Float: return Expr::num(e.dyn<FloatExpr>()->value);
    case ExprKind::String: return Expr::string(e.dyn<StringExpr>()->value);
    case ExprKind::List: {
      Expr l;
      l.op = Expr::Op::List;
      for (const auto& el : e.dyn<ListExpr>()->elements) l.kids.push_back(lower_expr(*el, vars));
      return l;
    }
    case ExprKind::Name: {
      const std::string& n = e.dyn<NameExpr>()->name;
      if (n == "true" || n == "false") return Expr::boolean_(n == "true");
      if (auto bound = vars.name(n)) return *bound;
      DataType dt = dtype_from_name(n);
      if (dt != DataType::Undefined) return Expr::dtype_name(dt);
      return Expr::op_name(OpType::onnx(n));
    }
    case ExprKind::AttrRead: {
      const auto& a = *e.dyn<AttrReadExpr>();
      int v = vars.attr_base(a.base);
      if (v < 0) return Expr::op_name(OpType(canonical_domain(a.base), a.attr));  // fusor.Gelu
      if (a.attr == "op") return Expr::of_var(Expr::Op::OpOf, v);
      if (a.attr == "attrs") throw LowerError{e.loc, "'.attrs' is only supported as an attribute value"};
      return Expr::attr(v, a.attr);
    }
    case ExprKind::Index: {
      const auto& i = *e.dyn<IndexExpr>();
      return Expr::call(Expr::Op::Index, {lower_expr(*i.base, vars), lower_expr(*i.index, vars)});
    }
    case ExprKind::Unary: {
      const auto& u = *e.dyn<UnaryExpr>();
      return Expr::call(u.op == UnaryOp::Not ? Expr::Op::Not : Expr::Op::Neg, {lower_expr(*u.operand, vars)});
    }
    case ExprKind::Binary: {
      const auto& b = *e.dyn<BinaryExpr>();
      static const std::map<BinaryOp, Expr::Op> ops = {
          {BinaryOp::Or, Expr::Op::Or},   {BinaryOp::And, Expr::Op::And}, {BinaryOp::Eq, Expr::Op::Eq},
          {BinaryOp::Ne, Expr::Op::Ne},   {BinaryOp::Lt, Expr::Op::Lt},   {BinaryOp::Le, Expr::Op::Le},
          {BinaryOp::Gt, Expr::Op::Gt},   {BinaryOp::Ge, Expr::Op::Ge},   {BinaryOp::In, Expr::Op::In},
          {BinaryOp::Add, Expr::Op::Add}, {BinaryOp::Sub, Expr::Op::Sub}, {BinaryOp::Mul, Expr::Op::Mul},
          {BinaryOp::Div, Expr::Op::Div}, {BinaryOp::Mod, Expr::Op::Mod}};
      return Expr::call(ops.at(b.op), {lower_expr(*b.lhs, vars), lower_expr(*b.rhs, vars)});
    }
    case ExprKind::Call: return lower_builtin(*e.dyn<CallExpr>(), vars);
    default: throw LowerError{e.loc, "unsupported expression"};
  }
}

}  // namespace fusor::dsl
