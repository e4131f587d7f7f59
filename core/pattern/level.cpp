#include "core/pattern/level.h"

#include <array>

#include "core/util/error.h"

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

std::optional<OptLevel> find_opt_level(std::string_view text) {
  for (OptLevel l : kLevels)
    if (text == opt_level_name(l)) return l;
  return std::nullopt;
}

OptLevel parse_opt_level(std::string_view text) {
  if (auto l = find_opt_level(text)) return *l;
  throw_usage("unknown optimization level '" + std::string(text) + "' (known: " + opt_level_names() + ")");
}

std::optional<OptLevel> parse_rule_level(std::string_view text) {
  auto l = find_opt_level(text);
  if (l == OptLevel::Disabled) return std::nullopt;
  return l;
}

}  // namespace fusor
