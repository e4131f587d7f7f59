// Rules as data (1/3): the pattern a rule matches. rewrite.h holds the rewrite templates,
// rule.h the whole rule; expr.h the `where` expressions.
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
//   inputs reference vars, other new nodes (by index, earlier in the list), literals, the values
//   a variadic tail matched (spliced in: RInput::Kind::Tail) or nothing (an absent input). `b ?? 0.0` is RInput::var with `fallback_literal` set.
// - Attribute templates: a literal, `<...c>` (copy all attributes of c's producer), `y.epsilon`
//   (read an attribute, ONNX default when omitted), `y.op` / `y.attrs`, or an Expr (e.g.
//   `scalar(eps)`).
// Lowering details:
// - An output written `_` (`y, _ = Dropout(x)`) or left out is outputs[i] = -1: it must have no
//   consumers. Only named outputs a rewrite redefines may keep outside consumers.
// - Literals in slots the normal form lifts to attributes (Clip's min/max, Reduce*/Squeeze/
//   Unsqueeze axes: see lifted_input_attr in core/ops/op_traits.h) lower to AttrConstraints.
// - `const(a, b)` is Expr{IsConst} with Expr{Var} kids; `y.epsilon` is Expr{AttrRead};
//   `y.op` is Expr{OpOf}; in a rewrite, `y.epsilon` used as an input is RInput::of_expr.
// - `pattern NAME(params)` calls are inlined; a pattern with several bodies becomes one Rule per
//   body (same name, file:line, benefit).
// - benefit: Rule::benefit, default the number of pattern nodes; ties: order in the rule vector
//   (file order), then name.
// Values, not strings: op alternatives are interned OpTypes, so dispatch is an integer compare.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/dtype.h"
#include "core/ir/symbol.h"
#include "core/pattern/expr.h"

namespace fusor {


// The literal tolerance: a float value equals a decimal literal when they differ by at most
// kLiteralTolerance x max(1, |literal|) (a float32 attribute 0.2f equals the literal 0.2).
inline constexpr double kLiteralTolerance = 1e-6;
bool within_literal_tolerance(double value, double literal);

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

}  // namespace fusor
