// A rule's `test` block turned into a small model (docs/rules-reference.md, section 7).
//
// The match is built as a graph, statement by statement in dependency order:
// - a capture the test types becomes a graph input (`x: float[2, 3]`), or an initializer when it
//   is `const` (its contents the test's value, one value filling every element, else random
//   uniform in [0.5, 1.5): positive and away from zero, so variances, divisors and logarithms stay
//   defined; a test that needs signs or zeros writes the values out);
// - an optional capture the test leaves out or marks `none` is an absent input (so is an optional
//   input local to a pattern body, which a test cannot name);
// - a literal becomes a constant: its element type is the input's fixed type, else the type of a
//   sibling input under the same type constraint, else float for a float literal and int64 for an
//   integer one; a number is a scalar, or a 1-D tensor of one element in an integer-only input
//   whose siblings under the same constraint are 1-D (Slice's steps) or when the op rejects a
//   scalar;
// - a wildcard `_` in an integer-only input (a shape, axes) becomes a constant holding the shape
//   of the node's first input (so `Reshape(x, _)` and `Expand(x, _)` keep x's shape); in an input
//   the normal form lifts to an attribute (Squeeze/Unsqueeze axes, Clip min/max) it is left out;
//   elsewhere it is a graph input typed as the node's first input;
// - an alternation instantiates its first op unless the test picks one (`y.op = Clip`); a
//   pattern call inlines its first body, or the first whose result node can be that op;
// - attributes come from the match's literal constraints (`<perm = [1, 0]>`) and the test
//   (`c.pads = [1, 1, 1, 1]`); attributes the op's opset spells as inputs (Clip's min/max,
//   axes) become constant inputs.
// Types and shapes are inferred node by node with ONNX's inference functions (engine/rewrite/infer.h);
// an op that rejects its instantiated inputs is an InstantiateError naming the node.
// The graph's outputs are the values the match produces and does not consume itself, each read
// through a sink node (Identity, or Neg/Abs/Cast when the rule matches Identity) so the pattern
// sits inside a graph as in a model: `y = x` rewrites need y's consumers to repoint, which a
// graph output fed by a graph input would forbid. The outputs keep the match's names (the
// matched values are renamed "y.match").
// Deterministic: the same rule, test and seed give the same model.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "dsl/ast.h"
#include "core/ir/model.h"

namespace fusor::ruletest {

// The test block cannot be built as a graph; the message says why and where.
struct InstantiateError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `opset`: the ONNX opset of the model (the one the rules were checked at).
std::unique_ptr<Model> instantiate(const dsl::RuleDecl& rule, const dsl::TestBlock& test, int opset, uint64_t seed);

}  // namespace fusor::ruletest
