// The one checker of the expression language: `where` conditions, computed attribute values and
// rewrite inputs of rules (dsl/sema*.cpp), and the conditions of a provider's kernel declarations
// (dsl/provider_check.cpp). What differs between those places is which names are in scope and
// what they mean; an ExprScope says that, the checker does the rest (literals, lists, operators,
// comparisons, indexing, built-in functions, op and element-type names), so every operator has
// one set of rules and one set of messages.
//
// Name resolution, in order: a name the scope binds; an element type name (`float`); an ONNX op
// name (`Relu`); else the scope reports it. `d.X` is an op of domain `d` (`fusor.Gelu`) unless the
// scope binds `d`, then the scope reads X of it (`y.epsilon`, `y.op`).
#pragma once
#include <optional>
#include <string>

#include "dsl/ast.h"
#include "dsl/builtins.h"
#include "dsl/diagnostics.h"
#include "dsl/op_catalog.h"

namespace fusor::dsl {

// "WHAT, got KIND" at e, with a hint on reading tensors when KIND is a tensor value.
void report_kind(Diagnostics& diags, const AstExpr& e, const std::string& what, const ExprType& t);

class ExprScope {
 public:
  virtual ~ExprScope() = default;
  // The kind of a bare name the scope binds; nullopt when it binds no such name.
  virtual std::optional<ExprType> name(const NameExpr& n) = 0;
  // Reports a name that is neither bound, an element type nor an op.
  virtual void unknown_name(const NameExpr& n) = 0;
  // Whether `base.X` reads X of something the scope binds (rather than naming an op of domain base).
  virtual bool binds(const std::string& base) const = 0;
  // `base.attr` where base is bound or is not a known domain; reports what is wrong.
  virtual ExprType attr_read(const AttrReadExpr& a) = 0;
  // A call (resolved by the scope: built-in, pattern or op). nullopt: a built-in the checker checks;
  // otherwise the scope has reported what is wrong and gives the kind.
  virtual std::optional<ExprType> call(CallExpr& c) = 0;
  // A built-in's argument that must name a tensor value (`rank(x)`): reports when it does not.
  virtual void value_argument(const CallExpr& c, const AstExpr& arg) = 0;
  // An op named in an expression (`fusor.Gelu`): reports an unknown op.
  virtual void op_name(const OpRef& ref) = 0;
  // The ONNX opset op names are looked up at.
  virtual int opset() const = 0;
};

class ExprChecker {
 public:
  ExprChecker(const OpCatalog& catalog, Diagnostics& diags, ExprScope& scope)
      : catalog_(catalog), diags_(diags), scope_(scope) {}

  // The kind of `e`, reporting every problem in it.
  ExprType check(AstExpr& e);

  // Whether values of kinds a and b may be compared with == / in.
  static bool comparable(const ExprType& a, const ExprType& b);

 private:
  ExprType name_type(const NameExpr& n);
  ExprType attr_read_type(const AttrReadExpr& a);
  ExprType builtin_type(CallExpr& c);
  ExprType binary_type(BinaryExpr& b);
  void kind_error(const AstExpr& e, const std::string& what, const ExprType& t) { report_kind(diags_, e, what, t); }

  const OpCatalog& catalog_;
  Diagnostics& diags_;
  ExprScope& scope_;
};

}  // namespace fusor::dsl
