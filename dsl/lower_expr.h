// Lowering of a checked expression (dsl/expr_check.h) into the one expression form the engine
// evaluates (core/pattern/expr.h). Used for a rule's where conditions and computed values
// (dsl/lower.h) and for a provider's kernel conditions (dsl/provider.h): what differs is how
// names map to the vars the Expr reads, which an ExprVars says.
#pragma once
#include <optional>
#include <string>

#include "core/pattern/expr.h"
#include "dsl/ast.h"

namespace fusor::dsl {

// Thrown while lowering: a construct the engine cannot run (the checks let few through); the
// caller turns it into a diagnostic at `loc`.
struct LowerError {
  SourceLoc loc;
  std::string message;
};

class ExprVars {
 public:
  virtual ~ExprVars() = default;
  // The Expr a bare name stands for when it is bound (a Var, a node attribute read, ...); nullopt
  // for an element type or op name.
  virtual std::optional<Expr> name(const std::string& n) const = 0;
  // The var whose producer `base.attr` reads, -1 when `base` is an op domain (`fusor.Gelu`).
  virtual int attr_base(const std::string& base) const = 0;
  // The var a built-in's value argument names (`rank(x)`); throws LowerError when none.
  virtual int value_var(const AstExpr& arg) const = 0;
};

Expr lower_expr(const AstExpr& e, const ExprVars& vars);

}  // namespace fusor::dsl
