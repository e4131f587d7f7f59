#include "engine/session/optimize.h"

#include <array>

#include "engine/ir/error.h"
#include "engine/util/log.h"

namespace fusor {

namespace {
constexpr std::array<OptLevel, 5> kLevels = {OptLevel::Disabled, OptLevel::Basic, OptLevel::Extended,
                                             OptLevel::Layout, OptLevel::All};
}  // namespace

const char* opt_level_name(OptLevel level) {
  switch (level) {
    case OptLevel::Disabled: return "disabled";
    case OptLevel::Basic: return "basic";
    case OptLevel::Extended: return "extended";
    case OptLevel::Layout: return "layout";
    case OptLevel::All: return "all";
  }
  return "?";
}

std::string opt_level_names() {
  std::string s;
  for (OptLevel l : kLevels) s += (s.empty() ? "" : ", ") + std::string(opt_level_name(l));
  return s;
}

OptLevel parse_opt_level(std::string_view text) {
  for (OptLevel l : kLevels)
    if (text == opt_level_name(l)) return l;
  throw_usage("unknown optimization level '" + std::string(text) + "' (known: " + opt_level_names() + ")");
}

const std::vector<std::string>& known_providers() {
  static const std::vector<std::string> providers = {"cpu"};
  return providers;
}

void check_provider(const std::string& name) {
  for (const std::string& p : known_providers())
    if (p == name) return;
  std::string known;
  for (const std::string& p : known_providers()) known += (known.empty() ? "" : ", ") + p;
  throw_usage("unknown provider '" + name + "' (known: " + known + ")");
}

OptimizeReport optimize(Model& model, const OptimizeOptions& options) {
  for (const std::string& p : options.providers) check_provider(p);
  OptimizeReport report;
  // No rewrite exists yet (the rule engine is a later issue), so every level leaves the model as
  // loaded. Say so rather than pretend: rules_fired stays empty.
  if (options.level != OptLevel::Disabled) {
    FUSOR_LOG(Info) << "level '" << opt_level_name(options.level)
                    << "': no rewrite rules or passes are implemented yet; the model is unchanged";
  }
  if (!options.rule_files.empty()) throw_usage("rule files are not supported yet (no rule engine)");
  if (!options.disabled.empty()) throw_usage("disabling rules is not supported yet (no rule engine)");
  (void)model;
  return report;
}

}  // namespace fusor
