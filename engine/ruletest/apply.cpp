#include "engine/ruletest/apply.h"

#include <algorithm>

#include "core/util/error.h"
#include "dsl/lower.h"
#include "engine/rewrite/passes.h"

namespace fusor::ruletest {

const std::vector<std::string>& fold_passes() {
  static const std::vector<std::string> p = {kConstantFolding, kDeadCode};
  return p;
}

const std::vector<std::string>& all_passes() {
  static const std::vector<std::string> p = {kConstantFolding, kDeadCode, kCse, kInitializerDedup};
  return p;
}

RewriteReport apply_rules(Model& model, const std::vector<const dsl::RuleDecl*>& rules,
                          const std::vector<std::string>& passes, const std::string& explain_rule) {
  dsl::Diagnostics diags;
  std::vector<Rule> lowered = lower_rules(rules, diags);
  if (diags.has_errors()) throw_bad_input("rules cannot be lowered:\n" + diags.str());
  RewriteOptions ro;
  for (const std::string& p : all_passes())
    if (std::find(passes.begin(), passes.end(), p) == passes.end()) ro.disabled.push_back(p);
  ro.explain_rule = explain_rule;
  return run_rewrites(model, lowered, ro);
}

}  // namespace fusor::ruletest
