#include "dsl/rules.h"

#include "dsl/parser.h"
#include "dsl/sema.h"

namespace fusor::dsl {

const RuleDecl* RuleSet::find_rule(const std::string& name) const {
  for (const RuleDecl* r : rules)
    if (r->name == name) return r;
  return nullptr;
}

const PatternDecl* RuleSet::find_pattern(const std::string& name) const {
  auto it = patterns.find(name);
  return it == patterns.end() ? nullptr : it->second;
}

RuleSet load_rules(const std::vector<std::string>& files, const CheckOptions& opts, Diagnostics& diags) {
  RuleSet rs;
  rs.files = parse_rule_files(files, diags);
  check_rules(rs, opts, diags);
  return rs;
}

RuleSet load_rules_from_text(const std::string& name, const std::string& text, const CheckOptions& opts,
                             Diagnostics& diags) {
  RuleSet rs;
  rs.files = parse_rule_files_from_text(name, text, diags);
  check_rules(rs, opts, diags);
  return rs;
}

}  // namespace fusor::dsl
