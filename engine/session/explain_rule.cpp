#include "engine/session/explain_rule.h"

#include <algorithm>
#include <cctype>

#include "dsl/rules.h"
#include "dsl/suggest.h"
#include "core/util/error.h"
#include "engine/rewrite/passes.h"

namespace fusor {

namespace {

dsl::RuleSet load_or_fail(const std::vector<std::string>& files, int64_t opset) {
  dsl::CheckOptions copts;
  copts.opset = static_cast<int>(opset);
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules(files, copts, diags);
  if (diags.has_errors()) {
    throw_bad_input(diags.error_text("rules: ", "rule files"));
  }
  return set;
}

std::string location_of(const dsl::RuleDecl& d) { return d.loc.file + ":" + std::to_string(d.loc.line); }

// Where the shipped rules define `name`, when --no-default-rules left them out ("" if nowhere).
std::string shipped_location(const OptimizeOptions& o, int64_t opset) {
  // Only a hint: shipped files with errors (which these flags do not use) give none.
  try {
    std::vector<std::string> files = default_rule_files(OptLevel::All, o.providers.front(), o.rules_root);
    dsl::CheckOptions copts;
    copts.opset = static_cast<int>(opset);
    dsl::Diagnostics diags;
    dsl::RuleSet set = dsl::load_rules(files, copts, diags);
    const dsl::RuleDecl* d = diags.has_errors() ? nullptr : set.find_rule(o.explain_rule);
    return d ? location_of(*d) : "";
  } catch (const Error&) {
    return "";
  }
}

// Up to three names near `name` (case-insensitive edit distance within a third of its length,
// at least 2), nearest first; the nearest as dsl::closest_name picks it leads.
std::vector<std::string> close_names(const std::string& name, std::vector<std::string> names) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  std::vector<std::pair<size_t, std::string>> scored;
  for (const std::string& n : names) {
    size_t d = dsl::edit_distance(lower(name), lower(n));
    if (d <= limit) scored.push_back({d, n});
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  std::string best = dsl::closest_name(name, names);
  if (!best.empty()) out.push_back(best);
  for (const auto& [d, n] : scored)
    if (out.size() < 3 && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

}  // namespace

ExplainResult describe_explained_rule(const OptimizeOptions& o, int64_t opset) {
  ExplainResult r;
  r.rule = o.explain_rule;
  r.provider = o.providers.front();
  for (const char* pass : {kConstantFolding, kDeadCode, kCse, kInitializerDedup})
    if (r.rule == pass)
      throw_usage("--rule: '" + r.rule + "' is a built-in pass, not a rule (explain covers rules)");

  std::vector<std::string> files;
  if (!o.no_default_rules) files = default_rule_files(OptLevel::All, r.provider, o.rules_root);
  files.insert(files.end(), o.rule_files.begin(), o.rule_files.end());
  dsl::RuleSet set = load_or_fail(files, opset);

  std::vector<const dsl::RuleDecl*> decls;
  std::vector<std::string> names;
  for (const dsl::RuleDecl* d : set.rules) {
    if (d->name == r.rule) decls.push_back(d);
    if (std::find(names.begin(), names.end(), d->name) == names.end()) names.push_back(d->name);
  }
  if (decls.empty()) {
    std::string msg = "--rule: no rule named '" + r.rule + "' in the rule files of provider '" + r.provider + "'" +
                      (o.rule_files.empty() ? "" : " and --rules");
    std::vector<std::string> near = close_names(r.rule, names);
    for (size_t i = 0; i < near.size(); ++i)
      msg += (i ? ", '" : "; did you mean '") + near[i] + (i + 1 == near.size() ? "'?" : "'");
    if (o.no_default_rules) {
      std::string shipped = shipped_location(o, opset);
      if (!shipped.empty()) msg += " (it is a shipped rule, " + shipped + ", and --no-default-rules leaves those out)";
    }
    if (o.rule_files.empty()) msg += " (a rule of your own file needs --rules FILE)";
    throw_usage(msg);
  }
  for (const dsl::RuleDecl* d : decls) r.locations.push_back(location_of(*d));
  const dsl::RuleDecl& d = *decls.front();
  r.level = opt_level_name(d.level);

  if (o.level == OptLevel::Disabled) {
    r.not_run_reason = "no rule runs at level disabled";
    return r;
  }
  if (static_cast<int>(d.level) > static_cast<int>(o.level)) {
    r.not_run_reason = "it is a level-" + r.level + " rule, and level " + opt_level_name(o.level) +
                       " runs rules up to level " + opt_level_name(o.level) + " only";
    return r;
  }
  std::vector<const dsl::RuleDecl*> selected = set.select(o.level, r.provider);
  if (std::find(selected.begin(), selected.end(), &d) == selected.end()) {
    std::string named;
    for (const auto& p : d.providers) named += (named.empty() ? "" : ", ") + p.name;
    r.not_run_reason = "its providers clause names " + named + ", not '" + r.provider + "'";
    return r;
  }
  if (std::find(o.disabled.begin(), o.disabled.end(), r.rule) != o.disabled.end()) {
    r.not_run_reason = "--disable names it";
    return r;
  }
  r.ran = true;
  return r;
}

}  // namespace fusor
