#include "dsl/rules.h"

#include <algorithm>

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

namespace {

int64_t count_nodes(const AstExpr& e, int depth) {
  auto* c = e.dyn<CallExpr>();
  if (!c || depth > 16) return 0;  // depth: patterns cannot recurse (checked), this is a guard
  int64_t n = 0;
  if (c->call_kind == CallKind::Pattern && c->pattern && !c->pattern->bodies.empty()) {
    for (const auto& s : c->pattern->bodies[0]) n += count_nodes(*s.value, depth + 1);
  } else if (c->call_kind != CallKind::Builtin) {
    n = 1;
  }
  for (const auto& a : c->args) n += count_nodes(*a, depth);
  return n;
}

}  // namespace

int64_t default_benefit(const RuleDecl& r) {
  int64_t n = 0;
  for (const auto& s : r.match) n += count_nodes(*s.value, 0);
  return n;
}

std::vector<const RuleDecl*> RuleSet::select(OptLevel level, const std::string& provider) const {
  std::vector<const RuleDecl*> out;
  for (const RuleDecl* r : rules) {
    if (static_cast<int>(r->level) > static_cast<int>(level)) continue;
    if (!provider.empty() && !r->providers.empty() &&
        std::none_of(r->providers.begin(), r->providers.end(), [&](const NameRef& p) { return p.name == provider; }))
      continue;
    out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const RuleDecl* a, const RuleDecl* b) {
    int64_t ba = a->benefit ? *a->benefit : default_benefit(*a);
    int64_t bb = b->benefit ? *b->benefit : default_benefit(*b);
    if (ba != bb) return ba > bb;
    if (a->order != b->order) return a->order < b->order;
    return a->name < b->name;
  });
  return out;
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
