#include "cli/cmd_rules_test.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cli/command.h"
#include "cli/optimize_flags.h"
#include "core/util/error.h"
#include "engine/ruletest/model_check.h"
#include "engine/ruletest/rule_tests.h"
#include "core/util/json.h"

namespace fusor::cli {

namespace {

using ruletest::Difference;
using ruletest::Outcome;
using ruletest::TestResult;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

double parse_tolerance(const Args& args) {
  std::string text = args.get_or("tolerance", "");
  if (text.empty()) return ruletest::kDefaultTolerance;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !(v > 0))
    throw_usage("--tolerance: expected a positive number, got '" + text + "'");
  return v;
}

// "difference 3.1e-07 <= tolerance 0.0001"
std::string diff_text(const Difference& d, double tolerance) {
  return "difference " + num(d.error) + (d.error <= tolerance ? " <= " : " > ") + "tolerance " + num(tolerance);
}

std::string test_line(const TestResult& r) {
  std::string status = r.outcome == Outcome::NoTest && !r.failed ? "NOTEST" : r.failed ? "FAIL" : "PASS";
  std::string line = status + "  " + r.rule + "  " + (r.test.empty() ? "-" : r.test) + "  " + r.location + "  ";
  switch (r.outcome) {
    case Outcome::Pass: line += diff_text(r.diff, r.tolerance) + " (fired " + std::to_string(r.fired) + "x)"; break;
    case Outcome::Mismatch:
      line += (r.diff.problem.empty() ? diff_text(r.diff, r.tolerance) + ": " : std::string()) + r.message;
      break;
    case Outcome::NotFired: line += r.message; break;
    case Outcome::Error: line += r.message; break;
    case Outcome::NoTest: line += r.message; break;
  }
  return line;
}

json::Value diff_json(const Difference& d, bool measured) {
  return measured ? json::Value(d.error) : json::Value(nullptr);
}

json::Value test_json(const TestResult& r) {
  bool measured = r.measured;
  json::Value o = json::Value::object();
  o.set("rule", r.rule);
  o.set("test", r.test);
  o.set("location", r.location);
  o.set("outcome", ruletest::outcome_name(r.outcome));
  o.set("passed", !r.failed);
  o.set("fired", r.fired);
  o.set("difference", diff_json(r.diff, measured));
  o.set("max_abs_difference", measured ? json::Value(r.diff.max_abs) : json::Value(nullptr));
  o.set("tolerance", r.tolerance);
  o.set("nodes_before", r.nodes_before);
  o.set("nodes_after", r.nodes_after);
  o.set("message", r.message);
  return o;
}

json::Value model_json(const ruletest::ModelCheck& m) {
  json::Value o = json::Value::object();
  o.set("model", m.model);
  o.set("rules_fired", json::Value(m.fired));
  o.set("difference", diff_json(m.set_diff, m.set_measured));
  o.set("passed", !m.set_failed);
  o.set("message", m.set_message);
  json::Value checks = json::Value::array();
  for (const ruletest::RuleCheck& c : m.checks) {
    json::Value x = json::Value::object();
    x.set("rule", c.rule);
    x.set("location", c.location);
    x.set("fired", c.fired);
    x.set("fired_alone", c.fired_alone);
    x.set("mode", c.mode);
    bool measured = c.measured;
    x.set("difference", diff_json(c.diff, measured));
    x.set("max_abs_difference", measured ? json::Value(c.diff.max_abs) : json::Value(nullptr));
    x.set("passed", !c.failed);
    x.set("message", c.message);
    checks.push_back(x);
  }
  o.set("checks", checks);
  json::Value warnings = json::Value::array();
  for (const std::string& w : m.warnings) warnings.push_back(w);
  o.set("warnings", warnings);
  return o;
}

void print_model(const ruletest::ModelCheck& m, double tolerance) {
  std::cout << "model " << m.model << "\n";
  for (const std::string& w : m.warnings) std::cout << "  warning: " << w << "\n";
  std::string fired;
  for (const auto& [rule, n] : m.fired)
    if (n > 0) fired += (fired.empty() ? "" : ", ") + rule + " " + std::to_string(n) + "x";
  std::cout << "  fired: " << (fired.empty() ? "no rule" : fired) << "\n";
  std::cout << "  " << (m.set_failed ? "FAIL" : "PASS") << "  whole set  ";
  if (!m.set_measured) std::cout << m.set_message;
  else std::cout << diff_text(m.set_diff, tolerance) << (m.set_failed ? ": " + m.set_message : "");
  std::cout << "\n";
  for (const ruletest::RuleCheck& c : m.checks) {
    std::cout << "  " << (c.failed ? "FAIL" : "PASS") << "  " << c.rule << "  " << c.location << "  "
              << (c.mode.empty() ? "" : c.mode + ", ") << "fired " << c.fired << "x (alone " << c.fired_alone << "x)  ";
    if (!c.measured) std::cout << c.message;
    else std::cout << diff_text(c.diff, tolerance) << (c.failed ? ": " + c.message : "");
    std::cout << "\n";
  }
}

}  // namespace

void add_rules_test_flags(ArgParser& p) {
  p.section("test flags")
      .option("model", "M.onnx", "test: also check the rules on this model", true)
      .option("tolerance", "T", "test: the largest allowed difference for tests that set none (default 1e-4)")
      .option("seed", "S", "test: seed of the random inputs and constants (default 0)")
      .flag("require-tests", "test: a rule without a test block is a failure")
      .option("rule", "NAME", "test: only this rule's tests and model checks", true);
  add_shape_flags(p);
}

int run_rules_test(const Args& args, const dsl::RuleSet& set, const std::vector<std::string>& files) {
  ruletest::TestOptions opts;
  opts.tolerance = parse_tolerance(args);
  opts.seed = static_cast<uint64_t>(args.get_int("seed", 0, 0));
  opts.require_tests = args.has("require-tests");
  for (const std::string& name : args.all("rule")) {
    if (!set.find_rule(name)) throw_usage("--rule: no rule named '" + name + "' in the rule files");
    opts.only.push_back(name);
  }
  ShapeOverrides overrides = parse_shape_flags(args);
  std::vector<std::string> models = args.all("model");

  std::vector<TestResult> results = ruletest::run_tests(set, opts);
  std::vector<ruletest::ModelCheck> checks;
  for (const std::string& m : models) checks.push_back(ruletest::check_model(m, overrides, set, opts));

  int passed = 0, failed = 0, untested = 0;
  for (const TestResult& r : results) {
    if (r.outcome == Outcome::NoTest) ++untested;
    if (r.failed) ++failed;
    else if (r.outcome != Outcome::NoTest) ++passed;
  }
  std::vector<std::string> breaking;
  bool models_failed = false;
  for (const auto& m : checks) {
    models_failed = models_failed || m.failed();
    for (const auto& c : m.checks)
      if (c.failed && std::find(breaking.begin(), breaking.end(), c.rule) == breaking.end()) breaking.push_back(c.rule);
  }
  bool ok = failed == 0 && !models_failed;

  if (args.has("json")) {
    json::Value o = json::Value::object();
    json::Value f = json::Value::array();
    for (const std::string& s : files) f.push_back(s);
    o.set("files", f);
    o.set("seed", static_cast<int64_t>(opts.seed));
    o.set("tolerance", opts.tolerance);
    json::Value tests = json::Value::array();
    for (const TestResult& r : results) tests.push_back(test_json(r));
    o.set("tests", tests);
    json::Value ms = json::Value::array();
    for (const auto& m : checks) ms.push_back(model_json(m));
    o.set("models", ms);
    o.set("tests_passed", passed);
    o.set("tests_failed", failed);
    o.set("rules_without_tests", untested);
    json::Value b = json::Value::array();
    for (const std::string& s : breaking) b.push_back(s);
    o.set("breaking_rules", b);
    o.set("ok", ok);
    std::cout << o.dump(2) << "\n";
  } else {
    for (const TestResult& r : results) std::cout << test_line(r) << "\n";
    std::cout << passed + failed - (opts.require_tests ? untested : 0) << " test(s): " << passed << " passed, "
              << failed - (opts.require_tests ? untested : 0) << " failed";
    if (untested) std::cout << "; " << untested << " rule(s) without a test" << (opts.require_tests ? " (failures)" : "");
    std::cout << "\n";
    for (const auto& m : checks) print_model(m, opts.tolerance);
    if (!breaking.empty()) {
      std::string s;
      for (const std::string& b : breaking) s += (s.empty() ? "" : ", ") + b;
      std::cout << "rules that break equivalence: " << s << "\n";
    }
  }
  return ok ? kExitOk : kExitTestFailed;
}

}  // namespace fusor::cli
