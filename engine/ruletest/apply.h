// Applying some of a rule set to a model through the normal rewrite path (lowering, then the
// fixed-point runner of engine/rewrite/runner.h), with a chosen subset of the built-in passes.
#pragma once
#include <string>
#include <vector>

#include "dsl/rules.h"
#include "core/ir/model.h"
#include "engine/rewrite/runner.h"

namespace fusor::ruletest {

// constant_folding and dead_code: what a single rule is checked with, so the arithmetic a
// rewrite leaves on constants (folded weights) resolves as it does in optimize.
const std::vector<std::string>& fold_passes();
// Every built-in pass, as optimize runs them.
const std::vector<std::string>& all_passes();

// Lowers `rules` (already checked) and runs them with `passes` on, the other built-in passes
// off. A rewrite limit (a cycle) is reported in RewriteReport::stop, not thrown. With
// `explain_rule`, RewriteReport::explain says where that rule matched or nearly matched.
// Throws Error(BadInput) when a rule cannot be lowered.
RewriteReport apply_rules(Model& model, const std::vector<const dsl::RuleDecl*>& rules,
                          const std::vector<std::string>& passes, const std::string& explain_rule = "");

}  // namespace fusor::ruletest
