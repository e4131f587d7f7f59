#include "engine/ruletest/model_check.h"

#include <algorithm>

#include "core/util/error.h"
#include "engine/ruletest/apply.h"

namespace fusor::ruletest {

bool ModelCheck::failed() const {
  return set_failed || std::any_of(checks.begin(), checks.end(), [](const RuleCheck& c) { return c.failed; });
}

namespace {

int64_t fired_of(const RewriteReport& rep, const std::string& name) {
  auto it = rep.rules_fired.find(name);
  return it == rep.rules_fired.end() ? 0 : it->second;
}

// Whether `d` passes; fills the failure message otherwise.
bool within(const Difference& d, double tolerance, std::string& message) {
  if (!d.problem.empty()) {
    message = d.problem;
    return false;
  }
  if (d.error <= tolerance) return true;
  message = "outputs differ: " + d.worst;
  return false;
}

}  // namespace

ModelCheck check_model(const std::string& path, const ShapeOverrides& overrides, const dsl::RuleSet& set,
                       const TestOptions& opts) {
  ModelCheck mc;
  mc.model = path;
  LoadOptions lo;
  lo.overrides = overrides;
  auto load = [&] { return load_model(path, lo); };
  std::vector<const dsl::RuleDecl*> all = set.select(OptLevel::All, "");

  std::unique_ptr<Model> base = load();
  RandomRange range{0, 1, 0, 9};  // as `fusor run`
  NamedTensors inputs = random_inputs(*base->graph, opts.seed, range, &mc.warnings);
  std::vector<std::string> names = output_names(*base->graph);
  std::vector<Tensor> want;
  try {
    want = run_model(*base, inputs, 0);
  } catch (const Error& e) {
    throw_bad_input(path + ": the model cannot run as loaded, so rules cannot be checked on it: " + e.what());
  }

  // The whole set.
  std::unique_ptr<Model> whole = load();
  RewriteReport rep = apply_rules(*whole, all, all_passes());
  for (const dsl::RuleDecl* r : set.rules) mc.fired[r->name] = fired_of(rep, r->name);
  std::vector<Tensor> set_out;
  if (rep.stop != StopReason::Saturated) {
    mc.set_failed = true;
    mc.set_message = "rewriting did not finish: " + rep.stop_message;
  } else {
    try {
      set_out = run_model(*whole, inputs, 0);
      mc.set_diff = compare_outputs(names, want, set_out);
      mc.set_measured = mc.set_diff.problem.empty();
      mc.set_failed = !within(mc.set_diff, opts.tolerance, mc.set_message);
    } catch (const Error& e) {
      mc.set_failed = true;
      mc.set_message = std::string("the optimized model cannot run: ") + e.what();
    }
  }

  // Each rule that fired.
  for (const dsl::RuleDecl* r : set.rules) {
    if (mc.fired[r->name] == 0 || !opts.selected(r->name)) continue;
    RuleCheck c;
    c.rule = r->name;
    c.location = r->loc.file + ":" + std::to_string(r->loc.line);
    c.fired = mc.fired[r->name];
    try {
      std::unique_ptr<Model> alone = load();
      RewriteReport ar = apply_rules(*alone, {r}, fold_passes());
      c.fired_alone = fired_of(ar, r->name);
      if (ar.stop != StopReason::Saturated) {
        c.failed = true;
        c.message = "rewriting did not finish: " + ar.stop_message;
      } else if (c.fired_alone > 0) {
        c.mode = "alone";
        c.diff = compare_outputs(names, want, run_model(*alone, inputs, 0));
        c.measured = c.diff.problem.empty();
        c.failed = !within(c.diff, opts.tolerance, c.message);
      } else {
        c.mode = "in_context";
        std::vector<const dsl::RuleDecl*> others;
        for (const dsl::RuleDecl* o : all)
          if (o != r) others.push_back(o);
        std::unique_ptr<Model> without = load();
        RewriteReport wr = apply_rules(*without, others, all_passes());
        if (wr.stop != StopReason::Saturated || set_out.empty()) {
          c.failed = true;
          c.message = "cannot check in context: the whole set did not finish or run";
        } else {
          c.diff = compare_outputs(names, run_model(*without, inputs, 0), set_out);
          c.measured = c.diff.problem.empty();
          c.failed = !within(c.diff, opts.tolerance, c.message);
        }
      }
    } catch (const Error& e) {
      c.failed = true;
      c.message = std::string("the rewritten model cannot run: ") + e.what();
    }
    mc.checks.push_back(std::move(c));
  }
  return mc;
}

}  // namespace fusor::ruletest
