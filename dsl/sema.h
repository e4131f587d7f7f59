// Semantic checks of parsed rule files (the list is in docs/rules-reference.md, "Checks"):
// ops and their attributes against ONNX's schemas at the target opset and fusor's catalog,
// name binding, literal kinds, built-in functions, rewrite completeness, element types where
// the rule alone decides them, patterns and tests. Results go to Diagnostics; the AST gets its
// call resolutions (CallExpr::call_kind, ::pattern) filled in.
#pragma once
#include "dsl/diagnostics.h"
#include "dsl/rules.h"

namespace fusor::dsl {

// Checks every file of `rules` (fills rules.rules and rules.patterns first).
void check_rules(RuleSet& rules, const CheckOptions& opts, Diagnostics& diags);

}  // namespace fusor::dsl
