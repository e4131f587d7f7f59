// `fusor rules test`: runs the `test` blocks of rules (docs/rules-reference.md, section 7).
//
// Per test: instantiate the match as a small model (instantiate.h) at the opset its guards want
// (test_opset.h), twice; rewrite one copy with
// that rule alone plus constant_folding and dead_code (apply.h); the test fails when the rule
// did not fire (the message carries the matcher's near-miss reason), when rewriting did not
// terminate, when either graph cannot run, or when the outputs differ by more than the test's
// `tolerance` (else TestOptions::tolerance) in compare.h's measure. Graph inputs are random,
// uniform in [-1, 1) (integers in [0, 3]), drawn from TestOptions::seed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dsl/rules.h"
#include "engine/ruletest/compare.h"

namespace fusor::ruletest {

enum class Outcome {
  Pass,      // fired, and the outputs agree within the tolerance
  NotFired,  // the rule did not rewrite its own test graph
  Mismatch,  // the outputs differ by more than the tolerance
  Error,     // the test could not be instantiated, rewritten or run
  NoTest,    // the rule has no test block
};
// "pass", "not_fired", "mismatch", "error", "no_test"
const char* outcome_name(Outcome o);

inline constexpr double kDefaultTolerance = 1e-4;

struct TestOptions {
  double tolerance = kDefaultTolerance;  // for tests that set none
  uint64_t seed = 0;
  bool require_tests = false;            // a rule without a test block fails
  std::vector<std::string> only;         // test (and check on models) only these rules; empty: all
  bool selected(const std::string& rule) const;
};

struct TestResult {
  std::string rule;
  std::string test;      // the test block's name; "" when unnamed
  std::string location;  // FILE:LINE of the test block (of the rule for NoTest)
  Outcome outcome = Outcome::Pass;
  bool failed = false;   // NoTest fails only with require_tests
  int fired = 0;         // times the rule fired on its test graph
  double tolerance = kDefaultTolerance;
  Difference diff;
  bool measured = false; // diff holds a comparison of both graphs' outputs
  std::string message;   // why it failed; "" on a pass
  int64_t nodes_before = 0, nodes_after = 0;
};

TestResult run_test(const dsl::RuleDecl& rule, const dsl::TestBlock& test, int opset, const TestOptions& opts);

// Every test of every rule in `set` (file order), plus a NoTest result per rule without tests.
std::vector<TestResult> run_tests(const dsl::RuleSet& set, const TestOptions& opts);

}  // namespace fusor::ruletest
