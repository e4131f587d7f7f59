// Rules as data: the pattern, `where` predicates and rewrite templates the engine runs.
//
// Design note (for the lowering from the dsl AST):
// - Every name in a rule (`x`, `c`, `y`, and every anonymous nested call result) is a *var*,
//   an index into Pattern::vars. A var is either a *leaf* (bound to whatever value flows into the
//   match: `x`, `w`, `b?`) or the output `slot` of pattern node `producer` (`c = Conv(...)`).
//   `y = Relu(Conv(x, w))` lowers to two PatternNodes and vars {x, w, anon0 (Conv out), y}.
// - A PatternNode lists the op alternatives (`Relu | Sigmoid`), attribute constraints and its
//   inputs. An input is a var reference (a name used twice is the same var, so DAG patterns come
//   for free), a literal, a wildcard `_`, or a variadic tail `xs...` (last input only). `x?`
//   sets `optional` on the input.
// - The root is the pattern node the match starts from: the statement defining the last output.
//   Every pattern node must be reachable from the root through inputs.
// - `where` is an Expr tree over vars (Expr::var), evaluated after the structure matched.
// - A Rewrite is a list of new nodes (templates) and the redefinition of matched outputs. Template
//   inputs reference vars, other new nodes (by index, earlier in the list), literals or nothing
//   (an absent input). `b ?? 0.0` is RInput::var with `fallback_literal` set.
// - Attribute templates: a literal, `<...c>` (copy all attributes of c's producer), `y.epsilon`
//   (read an attribute, ONNX default when omitted), `y.op` / `y.attrs`, or an Expr (e.g.
//   `scalar(eps)`).
// Lowering details:
// - An output written `_` (`y, _ = Dropout(x)`) or left out is outputs[i] = -1: it must have no
//   consumers. Only named outputs a rewrite redefines may keep outside consumers.
// - Literals in slots the normal form lifts to attributes (Clip's min/max, Reduce*/Squeeze/
//   Unsqueeze axes: see lifted_input_attr in normalize.h) lower to AttrConstraints.
// - `const(a, b)` is Expr{IsConst} with Expr{Var} kids; `y.epsilon` is Expr{AttrRead};
//   `y.op` is Expr{OpOf}; in a rewrite, `y.epsilon` used as an input is RInput::of_expr.
// - `pattern NAME(params)` calls are inlined; a pattern with several bodies becomes one Rule per
//   body (same name, file:line, benefit).
// - benefit: Rule::benefit, default the number of pattern nodes; ties: order in the rule vector
//   (file order), then name.
// Values, not strings: op alternatives are interned OpTypes, so dispatch is an integer compare.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/dtype.h"
#include "core/ir/symbol.h"

namespace fusor {

// A literal in a pattern or rewrite: a scalar (`1e-5`, `2`) or a list (`[-1, 1, 1, 1]`).
struct Literal {
  std::vector<double> values;
  bool is_list = false;     // `[..]`: matches/creates a 1-D tensor; otherwise a scalar
  bool is_integer = false;  // written without a decimal point: matches ints exactly, floats too
  // Explicit element type for a rewrite literal; Undefined: typed from the op schema (the other
  // T-typed operand, int64 for shape-like inputs).
  DataType dtype = DataType::Undefined;

  static Literal scalar(double v, bool integer = false) { Literal l; l.values = {v}; l.is_integer = integer; return l; }
  static Literal list(std::vector<double> v, bool integer = true) {
    Literal l; l.values = std::move(v); l.is_list = true; l.is_integer = integer; return l;
  }
  std::string str() const;
};

struct PatternVar {
  std::string name;  // as written; "" for anonymous nested results (messages print "_tN")
  int producer = -1; // pattern node index, -1 for a leaf
  int slot = 0;      // output slot of the producer
};

struct PInput {
  enum class Kind { Var, Literal, Wildcard, Tail };
  Kind kind = Kind::Var;
  int var = -1;       // Var, Tail (Tail binds a list: see Match::tails)
  int literal = -1;   // index into Pattern::literals
  bool optional = false;
  static PInput of(int v, bool opt = false) { PInput p; p.var = v; p.optional = opt; return p; }
  static PInput lit(int l) { PInput p; p.kind = Kind::Literal; p.literal = l; return p; }
  static PInput wildcard() { PInput p; p.kind = Kind::Wildcard; return p; }
  static PInput tail(int v) { PInput p; p.kind = Kind::Tail; p.var = v; return p; }
};

// `<name = value>` in a match: the (normalized) attribute must equal `value` (floats with the
// literal tolerance). An omitted attribute is compared through its ONNX default.
struct AttrConstraint {
  std::string name;
  Attribute value;
};

struct PatternNode {
  std::vector<OpType> ops;  // alternatives; one for a plain op
  std::vector<AttrConstraint> attrs;
  std::vector<PInput> inputs;
  // outputs[i]: the var bound to output slot i, -1 when unnamed (must then have no consumers).
  std::vector<int> outputs;
};

// ---- `where` expressions ----
struct Expr {
  enum class Op {
    Number, Bool, List, OpName, DTypeName, // constants (List: kids are the elements)
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
  std::string name;     // AttrRead's attribute
  OpType optype;        // OpName
  DataType dtype = DataType::Undefined;  // DTypeName
  std::vector<Expr> kids;

  static Expr num(double v) { Expr e; e.number = v; return e; }
  static Expr boolean_(bool b) { Expr e; e.op = Op::Bool; e.boolean = b; return e; }
  static Expr of_var(Op op, int v) { Expr e; e.op = op; e.var = v; return e; }
  static Expr attr(int v, std::string n) { Expr e; e.op = Op::AttrRead; e.var = v; e.name = std::move(n); return e; }
  static Expr call(Op op, std::vector<Expr> kids) { Expr e; e.op = op; e.kids = std::move(kids); return e; }
  static Expr op_name(OpType t) { Expr e; e.op = Op::OpName; e.optype = t; return e; }
  static Expr dtype_name(DataType t) { Expr e; e.op = Op::DTypeName; e.dtype = t; return e; }
};

struct Pattern {
  std::vector<PatternVar> vars;
  std::vector<PatternNode> nodes;
  std::vector<Literal> literals;
  int root = -1;
  std::optional<Expr> where;

  // Builders (used by tests and by the lowering).
  int add_var(std::string name) { vars.push_back({std::move(name), -1, 0}); return static_cast<int>(vars.size()) - 1; }
  int add_literal(Literal l) { literals.push_back(std::move(l)); return static_cast<int>(literals.size()) - 1; }
  // Adds a node and `num_outputs` vars bound to its outputs (names from `out_names`, padded with
  // anonymous ones); returns the node index.
  int add_node(std::vector<OpType> ops, std::vector<PInput> inputs, std::vector<std::string> out_names = {""},
               std::vector<AttrConstraint> attrs = {});
  // The var of output `slot` of node `n`.
  int out(int n, int slot = 0) const { return nodes[n].outputs[slot]; }
  const std::string& var_name(int v) const { return vars[v].name; }
};

// ---- rewrite templates ----
struct RInput {
  // Expr: a value computed from the match used as a constant input (`Add(var, y.epsilon)`),
  // typed like a literal.
  enum class Kind { Var, NewNode, Literal, Absent, Expr };
  Kind kind = Kind::Absent;
  int var = -1;
  int node = -1, slot = 0;       // NewNode
  int literal = -1;              // Literal, or the `??` fallback of a Var
  int expr = -1;                 // Expr: index into Rewrite::exprs
  static RInput of(int v) { RInput r; r.kind = Kind::Var; r.var = v; return r; }
  static RInput or_literal(int v, int lit) { RInput r; r.kind = Kind::Var; r.var = v; r.literal = lit; return r; }
  static RInput node_out(int n, int s = 0) { RInput r; r.kind = Kind::NewNode; r.node = n; r.slot = s; return r; }
  static RInput lit(int l) { RInput r; r.kind = Kind::Literal; r.literal = l; return r; }
  static RInput absent() { return RInput{}; }
  static RInput of_expr(int e) { RInput r; r.kind = Kind::Expr; r.expr = e; return r; }
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
  OpType op;
  std::vector<AttrTemplate> attrs;
  std::vector<RInput> inputs;
  int num_outputs = 1;
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

enum class RuleLevel { Basic = 1, Extended = 2, Layout = 3, All = 4 };

struct Rule {
  std::string name;
  std::string file;   // for --trace and explain: "rules/basic.rules"
  int line = 0;
  RuleLevel level = RuleLevel::Basic;
  std::vector<std::string> providers;  // empty: any
  std::optional<int> benefit;          // default: number of matched nodes
  Pattern pattern;
  Rewrite rewrite;

  int effective_benefit() const { return benefit ? *benefit : static_cast<int>(pattern.nodes.size()); }
  std::string location() const { return file + ":" + std::to_string(line); }
};

}  // namespace fusor
