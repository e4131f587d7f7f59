// fusor.rules: the `fusor rules check` and `fusor rules test` commands as functions.
//   check(paths, opset=0) -> {"rules": N, "files": M, "diagnostics": text}; rule files with an
//     error raise InvalidGraph whose message holds the diagnostics (as the CLI prints them) and
//     "N error(s) in rule files".
//   test(paths, models=(), ...) -> the dict `fusor rules test --json` prints (same keys).

#include "dsl/rules.h"
#include "core/util/error.h"
#include "dsl/lower.h"
#include "python/bindings.h"
#ifdef FUSOR_PY_HAVE_RULETEST
#include "engine/ruletest/model_check.h"
#include "engine/ruletest/rule_tests.h"
#endif

namespace fusor::py {

namespace {

std::vector<std::string> path_list(const pyb::object& paths) {
  pyb::object fspath = pyb::module_::import("os").attr("fspath");
  std::vector<std::string> out;
  if (pyb::isinstance<pyb::str>(paths) || pyb::hasattr(paths, "__fspath__")) {
    out.push_back(pyb::str(fspath(paths)));
  } else {
    for (auto p : paths) out.push_back(pyb::str(fspath(p)));
  }
  if (out.empty()) raise(ErrorCode::InvalidArgument, "rules: give at least one rule file");
  return out;
}

// Loads, checks and lowers the files as `fusor rules check` does.
dsl::RuleSet load_checked(const std::vector<std::string>& files, int opset, std::string& diagnostics) {
  dsl::CheckOptions opts;
  opts.opset = opset;
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules(files, opts, diags);
  if (!diags.has_errors()) lower_rules(set.rules, diags);
  diagnostics = diags.str();
  if (diags.has_errors())
    raise(ErrorCode::InvalidGraph,
          diagnostics + std::to_string(diags.error_count()) + " error(s) in rule files");
  return set;
}

#ifdef FUSOR_PY_HAVE_RULETEST
pyb::object difference(const ruletest::Difference& d, bool measured) {
  return measured ? pyb::object(pyb::float_(d.error)) : pyb::object(pyb::none());
}

pyb::dict test_dict(const ruletest::TestResult& r) {
  pyb::dict o;
  o["rule"] = r.rule;
  o["test"] = r.test;
  o["location"] = r.location;
  o["outcome"] = ruletest::outcome_name(r.outcome);
  o["passed"] = !r.failed;
  o["fired"] = r.fired;
  o["difference"] = difference(r.diff, r.measured);
  o["max_abs_difference"] = r.measured ? pyb::object(pyb::float_(r.diff.max_abs)) : pyb::object(pyb::none());
  o["tolerance"] = r.tolerance;
  o["nodes_before"] = r.nodes_before;
  o["nodes_after"] = r.nodes_after;
  o["message"] = r.message;
  return o;
}

pyb::dict model_dict(const ruletest::ModelCheck& m) {
  pyb::dict o;
  o["model"] = m.model;
  o["rules_fired"] = m.fired;
  o["difference"] = difference(m.set_diff, m.set_measured);
  o["passed"] = !m.set_failed;
  o["message"] = m.set_message;
  pyb::list checks;
  for (const ruletest::RuleCheck& c : m.checks) {
    pyb::dict x;
    x["rule"] = c.rule;
    x["location"] = c.location;
    x["fired"] = c.fired;
    x["fired_alone"] = c.fired_alone;
    x["mode"] = c.mode;
    x["difference"] = difference(c.diff, c.measured);
    x["max_abs_difference"] = c.measured ? pyb::object(pyb::float_(c.diff.max_abs)) : pyb::object(pyb::none());
    x["passed"] = !c.failed;
    x["message"] = c.message;
    checks.append(x);
  }
  o["checks"] = checks;
  o["warnings"] = m.warnings;
  return o;
}
#endif

pyb::dict run_tests(const pyb::object& paths, const pyb::object& models, double tolerance, uint64_t seed,
                    bool require_tests, const std::map<std::string, int64_t>& dims,
                    const std::map<std::string, std::vector<int64_t>>& shapes, int opset) {
#ifdef FUSOR_PY_HAVE_RULETEST
  std::vector<std::string> files = path_list(paths);
  std::vector<std::string> model_paths;
  if (!models.is_none()) {
    pyb::object fspath = pyb::module_::import("os").attr("fspath");
    if (pyb::isinstance<pyb::str>(models)) model_paths.push_back(models.cast<std::string>());
    else for (auto m : models) model_paths.push_back(pyb::str(fspath(m)));
  }
  if (!(tolerance > 0)) raise(ErrorCode::InvalidArgument, "tolerance must be positive");
  ruletest::TestOptions opts;
  opts.tolerance = tolerance;
  opts.seed = seed;
  opts.require_tests = require_tests;
  ShapeOverrides overrides;
  for (const auto& [n, v] : dims) overrides.dims.emplace_back(n, v);
  for (const auto& [n, s] : shapes) overrides.shapes.emplace_back(n, Shape(s.begin(), s.end()));

  std::string diagnostics;
  dsl::RuleSet set = load_checked(files, opset, diagnostics);
  std::vector<ruletest::TestResult> results;
  std::vector<ruletest::ModelCheck> checks;
  {
    pyb::gil_scoped_release nogil;
    results = ruletest::run_tests(set, opts);
    for (const std::string& m : model_paths) checks.push_back(ruletest::check_model(m, overrides, set, opts));
  }
  int passed = 0, failed = 0, untested = 0;
  pyb::list tests;
  for (const auto& r : results) {
    if (r.outcome == ruletest::Outcome::NoTest) ++untested;
    if (r.failed) ++failed;
    else if (r.outcome != ruletest::Outcome::NoTest) ++passed;
    tests.append(test_dict(r));
  }
  pyb::list ms, breaking;
  bool models_failed = false;
  for (const auto& m : checks) {
    models_failed = models_failed || m.failed();
    ms.append(model_dict(m));
    for (const auto& c : m.checks)
      if (c.failed && !breaking.contains(pyb::str(c.rule))) breaking.append(c.rule);
  }
  pyb::dict o;
  o["files"] = files;
  o["seed"] = seed;
  o["tolerance"] = tolerance;
  o["tests"] = tests;
  o["models"] = ms;
  o["tests_passed"] = passed;
  o["tests_failed"] = failed;
  o["rules_without_tests"] = untested;
  o["breaking_rules"] = breaking;
  o["ok"] = failed == 0 && !models_failed;
  o["diagnostics"] = diagnostics;
  return o;
#else
  raise(ErrorCode::Fail, "fusor.rules.test: this build has no engine/ruletest (use `fusor rules test`)");
#endif
}

}  // namespace

void bind_rules(pyb::module_& m) {
  pyb::module_ r = m.def_submodule("rules", "check and test rule files (`fusor rules check|test`)");
  r.def(
      "check",
      [](const pyb::object& paths, int opset) {
        std::string diagnostics;
        dsl::RuleSet set = load_checked(path_list(paths), opset, diagnostics);
        pyb::dict d;
        d["rules"] = set.rules.size();
        d["files"] = set.files.size();
        d["diagnostics"] = diagnostics;
        return d;
      },
      pyb::arg("paths"), pyb::arg("opset") = 0,
      "Parse, check and lower rule files (a path or a list of paths). Returns {'rules', 'files', "
      "'diagnostics'}; raises InvalidGraph with the diagnostics when a file has an error.");
  r.def("test", &run_tests, pyb::arg("paths"), pyb::arg("models") = pyb::none(), pyb::arg("tolerance") = 1e-4,
        pyb::arg("seed") = 0, pyb::arg("require_tests") = false,
        pyb::arg("dims") = std::map<std::string, int64_t>{},
        pyb::arg("shapes") = std::map<std::string, std::vector<int64_t>>{}, pyb::arg("opset") = 0,
        "Run the rule files' test blocks and check the rules on `models`; returns what "
        "`fusor rules test --json` prints (its 'ok' is False when a test or check failed).");
  r.attr("HAVE_TEST") = pyb::bool_(
#ifdef FUSOR_PY_HAVE_RULETEST
      true
#else
      false
#endif
  );
}

}  // namespace fusor::py
