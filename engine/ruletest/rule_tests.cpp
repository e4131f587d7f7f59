#include "engine/ruletest/rule_tests.h"

#include <algorithm>

#include "core/util/error.h"
#include "engine/ruletest/apply.h"
#include "engine/ruletest/instantiate.h"
#include "engine/ruletest/test_opset.h"

namespace fusor::ruletest {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Pass: return "pass";
    case Outcome::NotFired: return "not_fired";
    case Outcome::Mismatch: return "mismatch";
    case Outcome::Error: return "error";
    case Outcome::NoTest: return "no_test";
  }
  return "?";
}

bool TestOptions::selected(const std::string& rule) const {
  return only.empty() || std::find(only.begin(), only.end(), rule) != only.end();
}

namespace {

std::string loc_str(const dsl::SourceLoc& l) { return l.file + ":" + std::to_string(l.line); }

// Why the rule did not fire, from the runner's explain records.
// Each distinct reason once (a root tried several times, or per pattern body, repeats them).
std::string near_miss(const RewriteReport& rep) {
  std::vector<std::string> seen;
  std::string s;
  for (const ExplainRecord& e : rep.explain) {
    if (e.reason.empty()) continue;
    std::string r = e.matched ? "matched at node '" + e.root + "' (" + e.op + "), but the rewrite was refused: " + e.reason
                              : e.reason;
    if (std::find(seen.begin(), seen.end(), r) != seen.end()) continue;
    seen.push_back(r);
    s += (s.empty() ? "" : "; ") + r;
  }
  return s.empty() ? "no node with the rule's root op was tried" : s;
}

TestResult fail(TestResult r, Outcome o, std::string message) {
  r.outcome = o;
  r.failed = true;
  r.message = std::move(message);
  return r;
}

}  // namespace

TestResult run_test(const dsl::RuleDecl& rule, const dsl::TestBlock& test, int opset, const TestOptions& opts) {
  TestResult r;
  r.rule = rule.name;
  r.test = test.name;
  r.location = loc_str(test.loc);
  r.tolerance = test.tolerance ? *test.tolerance : opts.tolerance;
  std::unique_ptr<Model> before, after;
  opset = test_opset(rule, opset);
  try {
    before = instantiate(rule, test, opset, opts.seed);
    after = instantiate(rule, test, opset, opts.seed);
  } catch (const InstantiateError& e) {
    return fail(r, Outcome::Error, std::string("cannot instantiate the test: ") + e.what());
  } catch (const Error& e) {
    return fail(r, Outcome::Error, std::string("cannot instantiate the test: ") + e.what());
  }
  r.nodes_before = static_cast<int64_t>(before->graph->num_nodes());
  RewriteReport rep;
  try {
    rep = apply_rules(*after, {&rule}, fold_passes(), rule.name);
    after->graph->verify();
  } catch (const Error& e) {
    return fail(r, Outcome::Error, std::string("rewriting failed: ") + e.what());
  }
  r.nodes_after = static_cast<int64_t>(after->graph->num_nodes());
  auto it = rep.rules_fired.find(rule.name);
  r.fired = it == rep.rules_fired.end() ? 0 : it->second;
  if (rep.stop != StopReason::Saturated) return fail(r, Outcome::Error, "rewriting did not finish: " + rep.stop_message);
  if (r.fired == 0) return fail(r, Outcome::NotFired, "did not fire: " + near_miss(rep));
  try {
    RandomRange range;  // [-1, 1), integers [0, 3]
    NamedTensors in = random_inputs(*before->graph, opts.seed, range, nullptr);
    std::vector<Tensor> want = run_model(*before, in);
    std::vector<Tensor> got = run_model(*after, in);
    r.diff = compare_outputs(output_names(*before->graph), want, got);
    r.measured = r.diff.problem.empty();
  } catch (const Error& e) {
    return fail(r, Outcome::Error, std::string("cannot run the graphs: ") + e.what());
  }
  if (!r.diff.problem.empty()) return fail(r, Outcome::Mismatch, r.diff.problem);
  if (!(r.diff.error <= r.tolerance)) return fail(r, Outcome::Mismatch, "outputs differ: " + r.diff.worst);
  return r;
}

std::vector<TestResult> run_tests(const dsl::RuleSet& set, const TestOptions& opts) {
  std::vector<TestResult> out;
  for (const dsl::RuleDecl* rule : set.rules) {
    if (!opts.selected(rule->name)) continue;
    if (rule->tests.empty()) {
      TestResult r;
      r.rule = rule->name;
      r.location = loc_str(rule->loc);
      r.outcome = Outcome::NoTest;
      r.failed = opts.require_tests;
      r.message = "the rule has no test block";
      out.push_back(std::move(r));
      continue;
    }
    for (const dsl::TestBlock& t : rule->tests) out.push_back(run_test(*rule, t, set.opset, opts));
  }
  return out;
}

}  // namespace fusor::ruletest
