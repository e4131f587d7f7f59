// Rules as data (3/3): a rule is a pattern, its `where` condition, a rewrite, and where it came
// from (name, file:line, level, providers, benefit). The dsl front end produces Rules
// (dsl/lower.h); the engine runs them (engine/rewrite).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/pattern/level.h"
#include "core/pattern/pattern.h"
#include "core/pattern/rewrite.h"

namespace fusor {

struct Rule {
  std::string name;
  std::string file;   // for --trace and explain: "rules/basic.rules"
  int line = 0;
  OptLevel level = OptLevel::Basic;  // never Disabled
  std::vector<std::string> providers;  // empty: any
  std::optional<int> benefit;          // default: number of matched nodes
  Pattern pattern;
  Rewrite rewrite;

  int effective_benefit() const { return benefit ? *benefit : static_cast<int>(pattern.nodes.size()); }
  std::string location() const { return file + ":" + std::to_string(line); }
};

}  // namespace fusor
