#include "engine/session/optimize.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <cstdlib>
#include <iostream>
#include <set>

#include "core/util/error.h"
#include "core/util/log.h"
#include "dsl/provider.h"
#include "dsl/rules.h"
#include "engine/rewrite/kernel_gate.h"
#include "dsl/lower.h"
#include "engine/rewrite/passes.h"
#include "engine/rewrite/runner.h"
#include "engine/session/explain_rule.h"
#include "engine/session/provider_def.h"
#include "engine/session/optimized_stamp.h"
#include "engine/session/partition.h"
#include "kernels/kernel.h"
#include "engine/session/rule_set_hash.h"

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
  // The definitions shipped in (or put into) providers/: a user's variant is a new text file, no
  // recompiling. cpu first, the rest by name.
  static const std::vector<std::string> providers = [] {
    std::vector<std::string> out = {"cpu"};
    std::error_code ec;
    std::vector<std::string> others;
    for (const auto& e : std::filesystem::directory_iterator(shipped_rules_root() + "/providers", ec))
      if (e.path().extension() == ".provider" && e.path().stem() != "cpu") others.push_back(e.path().stem().string());
    std::sort(others.begin(), others.end());
    out.insert(out.end(), others.begin(), others.end());
    return out;
  }();
  return providers;
}

void check_provider(const std::string& name) {
  for (const std::string& p : known_providers())
    if (p == name) return;
  std::string known;
  for (const std::string& p : known_providers()) known += (known.empty() ? "" : ", ") + p;
  throw_usage("unknown provider '" + name + "' (known: " + known + ")");
}

dsl::Level dsl_level(OptLevel level) {
  switch (level) {
    case OptLevel::Extended: return dsl::Level::Extended;
    case OptLevel::Layout: return dsl::Level::Layout;
    case OptLevel::All: return dsl::Level::All;
    default: return dsl::Level::Basic;
  }
}

namespace {

// The diagnostics travel in the error's text (a notebook or a host app sees no stderr).
[[noreturn]] void fail_with(const dsl::Diagnostics& diags, const std::string& what) {
  throw_bad_input(diags.error_text(what + ": ", "rule files"));
}

}  // namespace

std::vector<std::string> default_rule_files(OptLevel level, const std::string& provider, const std::string& root) {
  std::vector<std::string> files;
  if (level == OptLevel::Disabled) return files;
  std::string path = (root.empty() ? shipped_rules_root() : root) + "/providers/" + provider + ".provider";
  dsl::Diagnostics diags;
  auto def = dsl::load_provider(path, {}, diags);
  if (!def || diags.has_errors()) fail_with(diags, "provider '" + provider + "' (" + path + ")");
  return def->rule_files(dsl_level(level));
}

namespace {

// Levels run in order, as in ONNX Runtime: the rules below `layout` reach their fixed point first,
// then every rule runs together. Without the first phase the layout rules would convert a Conv to
// NHWC before the folds and fusions of the lower levels saw it (Conv + BatchNormalization,
// Conv + Relu), since the worklist reaches the Conv before its consumers.
RewriteReport run_rewrites_by_level(Model& model, const std::vector<Rule>& rules, const RewriteOptions& ro) {
  std::vector<Rule> lower;
  for (const Rule& r : rules)
    if (r.level == RuleLevel::Basic || r.level == RuleLevel::Extended) lower.push_back(r);
  if (lower.size() == rules.size()) return run_rewrites(model, rules, ro);
  RewriteReport first = run_rewrites(model, lower, ro);
  RewriteReport rep = run_rewrites(model, rules, ro);
  for (const auto& [name, n] : first.rules_fired) rep.rules_fired[name] += n;
  rep.trace.insert(rep.trace.begin(), first.trace.begin(), first.trace.end());
  rep.explain = merge_explain_runs(std::move(first.explain), std::move(rep.explain), first.nodes_visited, first.rewrites);
  rep.skipped += first.skipped;
  rep.nodes_visited += first.nodes_visited;
  rep.match_attempts += first.match_attempts;
  rep.rewrites += first.rewrites;
  return rep;
}

}  // namespace

// For the gate, a provider that declares its kernels also "runs" every ONNX op cpu has a kernel
// for: cpu is always the last fallback, so a rewrite that produces an ONNX op (the layout rules'
// Transposes, a fold's Reshape) is never skipped; fusor-domain ops, which target a provider's
// kernels, still need the provider's own declaration (xnnpack: NhwcConv with a clamp only).
static void declare_cpu_fallback_ops(dsl::ProviderDef& def) {
  if (def.kernels.empty()) return;
  for (OpType op : KernelRegistry::global().ops()) {
    if (!op.domain().empty() || !def.kernels_for("", op.name()).empty()) continue;
    dsl::KernelDecl d;
    d.loc = def.kernels.front().loc;
    d.op.name = op.name();
    def.kernels.push_back(std::move(d));
  }
}

std::vector<Rule> load_optimize_rules(const OptimizeOptions& options) {
  std::vector<std::string> files;
  if (!options.no_default_rules)
    files = default_rule_files(options.level, options.providers.front(), options.rules_root);
  for (const std::string& f : options.rule_files) files.push_back(f);
  if (files.empty()) return {};
  dsl::CheckOptions copts;
  // Rules are checked at the newest opset whatever the model's (docs/rules-reference.md, "Checks"):
  // they are written in the newest form, the matcher lifts older forms and rewrites are re-expressed
  // in the model's opset; `opset()` guards read the model's. Checking at the model's opset rejected
  // the shipped basic rules for opset-11 models (PaddleOCR det: Dropout's and Unsqueeze's inputs).
  copts.opset = 0;
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules(files, copts, diags);
  if (diags.has_errors()) fail_with(diags, "rules");
  std::vector<Rule> rules = lower_rules(set.select(dsl_level(options.level), options.providers.front()), diags);
  if (diags.has_errors()) fail_with(diags, "rules");
  if (!diags.empty()) std::cerr << diags.str();  // warnings
  return rules;
}

OptimizeReport optimize(Model& model, const OptimizeOptions& options) {
  for (const std::string& p : options.providers) check_provider(p);
  check_stamp_provider(model, options.providers);
  OptimizeReport report;
  if (!options.explain_rule.empty()) report.explain = describe_explained_rule(options, model.opset(""));
  if (options.level == OptLevel::Disabled) return report;
  std::vector<Rule> rules = load_optimize_rules(options);
  // --disable names a rule of the loaded set or a built-in pass; anything else is a typo.
  std::set<std::string> known = {kConstantFolding, kDeadCode, kCse, kInitializerDedup};
  for (const Rule& r : rules) known.insert(r.name);
  for (const std::string& d : options.disabled)
    if (!known.count(d)) throw_usage("--disable: no rule or built-in pass named '" + d + "' at this level");
  RewriteOptions ro;
  ro.disabled = options.disabled;
  ro.trace = options.trace;
  ro.explain_rule = options.explain_rule;
  // The first provider's kernel declarations gate rewrites (its rules are the ones that run).
  std::unique_ptr<dsl::ProviderDef> provider = load_provider_def(options.providers.front(), options.rules_root);
  declare_cpu_fallback_ops(*provider);
  KernelGate gate(*provider);
  ro.gate = &gate;
  RewriteReport rep;
  try {
    rep = run_rewrites_by_level(model, rules, ro);
  } catch (const Error& e) {
    // A rule set that does not terminate: name the model too (the message names the rules).
    if (e.kind() != ErrorKind::BadInput) throw;
    throw_bad_input(model.path + ": " + e.what());
  }
  report.explain.records = std::move(rep.explain);
  report.skipped = rep.skipped;
  for (const auto& [name, n] : rep.rules_fired) report.rules_fired[name] = n;
  for (const TraceRecord& t : rep.trace) report.trace.push_back(t.str());
  report.rule_set_hash = rule_set_hash(options);
  stamp_optimized(model, options, report.rule_set_hash);
  report.provider_nodes = partition_model(model, load_provider_chain(options.providers, options.rules_root), false).nodes_per_provider;
  FUSOR_LOG(Info) << "level '" << opt_level_name(options.level) << "': " << rules.size() << " rules, "
                  << rep.rewrites << " rewrites (" << stop_reason_name(rep.stop) << ")";
  return report;
}

}  // namespace fusor
