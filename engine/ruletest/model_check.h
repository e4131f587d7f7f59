// `fusor rules test --model M.onnx`: what a rule set does to a real model.
//
// 1. The whole set (every rule of the files, any level or provider, with all built-in passes,
//    as optimize runs them) is applied; how often each rule fired is recorded, and the result's
//    outputs are compared with the model's as loaded.
// 2. Each rule that fired (of TestOptions::only, when given) is checked on its own: the model rewritten by that rule alone (with
//    constant_folding and dead_code) against the model as loaded ("alone"). A rule that only
//    fires after other rules made room for it is checked in context instead: the whole set
//    with it against the whole set without it ("in_context").
// All runs use the same seeded random inputs (as `fusor run`: floats uniform in [0, 1),
// integers in [0, 9]; symbolic dims 1 unless --dim/--shape set them). A check fails when its
// difference (compare.h) exceeds TestOptions::tolerance or the rewritten model cannot run.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dsl/rules.h"
#include "core/onnx/onnx_io.h"
#include "engine/ruletest/compare.h"
#include "engine/ruletest/rule_tests.h"

namespace fusor::ruletest {

struct RuleCheck {
  std::string rule;
  std::string location;    // FILE:LINE of the rule
  int64_t fired = 0;       // in the whole-set run
  int64_t fired_alone = 0; // applied alone
  std::string mode;        // "alone" or "in_context"
  Difference diff;
  bool measured = false;   // diff holds a comparison of both models' outputs
  bool failed = false;
  std::string message;     // why it failed; "" otherwise
};

struct ModelCheck {
  std::string model;
  std::map<std::string, int64_t> fired;  // every rule of the set, 0 when it did not fire
  Difference set_diff;                   // the whole set against the model as loaded
  bool set_measured = false;
  bool set_failed = false;
  std::string set_message;
  std::vector<RuleCheck> checks;         // one per rule that fired, in rule order
  std::vector<std::string> warnings;     // symbolic dims set to 1
  bool failed() const;
};

// Throws Error(BadInput) when the model cannot be loaded or run as loaded.
ModelCheck check_model(const std::string& path, const ShapeOverrides& overrides, const dsl::RuleSet& set,
                       const TestOptions& opts);

}  // namespace fusor::ruletest
