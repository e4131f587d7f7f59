// Rules as data (2/3): rewrite templates, the new nodes a rule builds from a match and the
// matched values they redefine (see pattern.h for the design note).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/ir/attribute.h"
#include "core/pattern/expr.h"
#include "core/pattern/pattern.h"

namespace fusor {

struct RInput {
  // Expr: a value computed from the match used as a constant input (`Add(var, y.epsilon)`),
  // typed like a literal. Tail: the values a variadic capture `xs...` of the match bound (var is
  // its Tail var), spliced in at this position: none, one or many inputs.
  enum class Kind { Var, NewNode, Literal, Absent, Expr, Tail };
  Kind kind = Kind::Absent;
  int var = -1;                  // Var, Tail
  int node = -1, slot = 0;       // NewNode
  int literal = -1;              // Literal, or the `??` fallback of a Var
  int expr = -1;                 // Expr: index into Rewrite::exprs
  static RInput of(int v) { RInput r; r.kind = Kind::Var; r.var = v; return r; }
  static RInput or_literal(int v, int lit) { RInput r; r.kind = Kind::Var; r.var = v; r.literal = lit; return r; }
  static RInput node_out(int n, int s = 0) { RInput r; r.kind = Kind::NewNode; r.node = n; r.slot = s; return r; }
  static RInput lit(int l) { RInput r; r.kind = Kind::Literal; r.literal = l; return r; }
  static RInput absent() { return RInput{}; }
  static RInput of_expr(int e) { RInput r; r.kind = Kind::Expr; r.expr = e; return r; }
  static RInput tail(int v) { RInput r; r.kind = Kind::Tail; r.var = v; return r; }
};

struct AttrTemplate {
  enum class Kind {
    Literal,   // `value`
    CopyAll,   // <...c>: every (normalized) attribute of var's producer; later templates override
    Read,      // var.attr (with the ONNX default)
    OpName,    // var.op as a string attribute
    AttrsOf,   // var.attrs: floats of the matched node's numeric attributes (Clip min/max included)
    FromExpr,  // an Expr evaluated over the match (int, float or ints)
  };
  Kind kind = Kind::Literal;
  std::string name;       // the attribute set on the new node (unused for CopyAll)
  Attribute value;        // Literal
  int var = -1;           // CopyAll, Read, OpName, AttrsOf
  std::string read_name;  // Read: the attribute read
  std::optional<Expr> expr;
};

struct RNode {
  OpType op;  // the op to create, unless op_of_var is set
  std::vector<AttrTemplate> attrs;
  std::vector<RInput> inputs;
  int num_outputs = 1;
  int op_of_var = -1;  // `y.op(...)`: create the op that matched var y's producer (an alternation)
};

struct Redefinition {
  int var = -1;    // a matched output var
  RInput source;   // NewNode output, or Var (forwarding: `y = x`)
};

struct Rewrite {
  std::vector<Literal> literals;
  std::vector<Expr> exprs;
  std::vector<RNode> nodes;
  std::vector<Redefinition> redefs;
  int add_literal(Literal l) { literals.push_back(std::move(l)); return static_cast<int>(literals.size()) - 1; }
  int add_node(RNode n) { nodes.push_back(std::move(n)); return static_cast<int>(nodes.size()) - 1; }
  int add_expr(Expr e) { exprs.push_back(std::move(e)); return static_cast<int>(exprs.size()) - 1; }
};

}  // namespace fusor
