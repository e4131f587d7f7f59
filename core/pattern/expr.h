// The one expression language of fusor's rules: `where` conditions, computed attribute values
// and computed rewrite inputs of rules, and the conditions of a provider's kernel declarations.
// The dsl front end checks and lowers the text (dsl/lower.h) into this tree; the engine evaluates
// it (engine/rewrite/predicate.h) with one three-valued semantics.
//
// An Expr reads the match through *vars* (indexes into Pattern::vars): `rank(x)` is
// Expr{Rank, var = x}; `y.epsilon` is Expr{AttrRead, var = y, name = "epsilon"}; `y.op` is
// Expr{OpOf}; `const(a, b)` is Expr{IsConst} with Expr{Var} kids.
#pragma once
#include <string>
#include <vector>

#include "core/ir/dtype.h"
#include "core/ir/symbol.h"

namespace fusor {

struct Expr {
  enum class Op {
    Number, Bool, String, List, OpName, DTypeName, // constants (List: kids are the elements)
    IsConst,     // const(v...): kids are Var exprs
    Rank, DType, Shape, Uses, Scalar,      // of `var`
    AttrRead,    // var.name (ONNX default when omitted)
    OpOf,        // var.op
    Opset,       // opset(): the model's ONNX opset
    Index,       // kids[0][kids[1]]
    Add, Sub, Mul, Div, Mod, Neg,
    Eq, Ne, Lt, Le, Gt, Ge,
    And, Or, Not,
    In,          // kids[0] in kids[1]
    Compose,     // r[i] = p[q[i]]
    Iota, Inverse, Len,
    Permute,     // r[i] = xs[p[i]]
    RemapAxes,   // r[i] = j where p[j] == axes[i]
    Absent,      // absent(x): var bound to an absent optional input
    ValueOf,     // value(x): a constant's elements as a flat list
    Var,         // a var reference, used as an argument of IsConst
  };
  Op op = Op::Number;
  double number = 0;
  bool boolean = false;
  int var = -1;
  std::string name;     // AttrRead's attribute; String's text
  OpType optype;        // OpName
  DataType dtype = DataType::Undefined;  // DTypeName
  std::vector<Expr> kids;

  static Expr num(double v) { Expr e; e.number = v; return e; }
  static Expr boolean_(bool b) { Expr e; e.op = Op::Bool; e.boolean = b; return e; }
  static Expr string(std::string s) { Expr e; e.op = Op::String; e.name = std::move(s); return e; }
  static Expr of_var(Op op, int v) { Expr e; e.op = op; e.var = v; return e; }
  static Expr attr(int v, std::string n) { Expr e; e.op = Op::AttrRead; e.var = v; e.name = std::move(n); return e; }
  static Expr call(Op op, std::vector<Expr> kids) { Expr e; e.op = op; e.kids = std::move(kids); return e; }
  static Expr op_name(OpType t) { Expr e; e.op = Op::OpName; e.optype = t; return e; }
  static Expr dtype_name(DataType t) { Expr e; e.op = Op::DTypeName; e.dtype = t; return e; }
};

}  // namespace fusor
