// Lowering of checked rule-language declarations (dsl/ast.h) into rules as data
// (core/pattern/rule.h), the form the engine runs: the engine never sees the AST. The dsl front end has already checked the rules; lowering only reports what the
// engine cannot express, as an error diagnostic at the construct:
// - a variadic capture `xs...` passed on in a rewrite (RInput has no tail kind);
// - a literal or wildcard passed as a pattern-call argument.
// A rule with such a construct yields no Rule (the caller must not run a rule set with errors).
//
// Pattern calls are inlined. A rule calling patterns with several bodies becomes one Rule per
// combination of the bodies chosen at each call site (same name, file:line and benefit), at most
// kMaxBodyCombinations of them.
// A `_` in an input slot the normal form lifts to an attribute (Unsqueeze's axes, Clip's min/max:
// see normalize.h) drops out of the pattern's inputs; a literal there becomes an attribute
// constraint.
#pragma once
#include <vector>

#include "core/pattern/rule.h"
#include "dsl/diagnostics.h"
#include "dsl/rules.h"

namespace fusor::dsl {

inline constexpr size_t kMaxBodyCombinations = 64;

// Lowers one checked rule; appends its Rules to `out`. Returns false (with diagnostics) when the
// rule uses something the engine cannot run.
bool lower_rule(const RuleDecl& rule, std::vector<Rule>& out, Diagnostics& diags);

// Lowers `rules` (e.g. RuleSet::select(...)) in order.
std::vector<Rule> lower_rules(const std::vector<const RuleDecl*>& rules, Diagnostics& diags);

}  // namespace fusor::dsl
