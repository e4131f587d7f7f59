#include "engine/session/optimize.h"

#include <algorithm>
#include <filesystem>
#include <cstdlib>
#include <set>

#include "core/util/error.h"
#include "core/util/log.h"
#include "dsl/provider.h"
#include "engine/rewrite/kernel_gate.h"
#include "engine/rewrite/passes.h"
#include "engine/rewrite/runner.h"
#include "engine/session/explain_rule.h"
#include "engine/session/provider_catalog.h"
#include "engine/session/optimized_stamp.h"
#include "engine/session/partition.h"
#include "kernels/kernel.h"
#include "engine/session/rule_cache.h"
#include "engine/session/rule_set_hash.h"

namespace fusor {

std::vector<std::string> default_rule_files(OptLevel level, const std::string& provider, const std::string& root) {
  if (level == OptLevel::Disabled) return {};
  ProviderCatalog catalog = ProviderCatalog::load_or_throw({provider}, root);
  return catalog.first().def->rule_files(level);
}

namespace {

// Levels run in order, as in ONNX Runtime: the rules below `layout` reach their fixed point first,
// then every rule runs together. Without the first phase the layout rules would convert a Conv to
// NHWC before the folds and fusions of the lower levels saw it (Conv + BatchNormalization,
// Conv + Relu), since the worklist reaches the Conv before its consumers.
RewriteReport run_rewrites_by_level(Model& model, const std::vector<Rule>& rules, const RewriteOptions& ro) {
  std::vector<Rule> lower;
  for (const Rule& r : rules)
    if (r.level == OptLevel::Basic || r.level == OptLevel::Extended) lower.push_back(r);
  if (lower.size() == rules.size()) return run_rewrites(model, rules, ro);
  RewriteReport first = run_rewrites(model, lower, ro);
  if (first.stop != StopReason::Saturated) return first;
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
static void declare_cpu_fallback_ops(KernelTable& table) {
  if (!table.restricts()) return;
  for (OpType op : KernelRegistry::global().ops()) {
    if (!op.domain().empty() || !table.for_op(op).empty()) continue;
    KernelEntry e;
    e.op = op;
    e.location = table.entries.front().location;
    table.entries.push_back(std::move(e));
  }
}

std::vector<std::string> optimize_rule_files(const OptimizeOptions& options, const ProviderInfo& provider) {
  std::vector<std::string> files;
  if (!options.no_default_rules && options.level != OptLevel::Disabled)
    files = provider.def->rule_files(options.level);
  for (const std::string& f : options.rule_files) files.push_back(f);
  return files;
}

OptimizeReport optimize(Model& model, const OptimizeOptions& options) {
  for (const std::string& p : options.providers) check_provider(p);
  if (options.level == OptLevel::Disabled) return optimize(model, options, ProviderCatalog());
  return optimize(model, options, ProviderCatalog::load_or_throw(options.providers, options.rules_root));
}

OptimizeReport optimize(Model& model, const OptimizeOptions& options, const ProviderCatalog& providers) {
  for (const std::string& p : options.providers) check_provider(p);
  check_stamp_provider(model, options.providers);
  OptimizeReport report;
  if (!options.explain_rule.empty()) report.explain = describe_explained_rule(options, model.opset(""));
  if (options.level == OptLevel::Disabled) return report;
  const std::vector<std::string> files = optimize_rule_files(options, providers.first());
  // Parsed, checked and lowered once per process while the files are unchanged (rule_cache.h).
  const std::shared_ptr<const LoadedRuleSet> loaded = load_rule_set(files, options.level, options.providers.front());
  const std::vector<Rule>& rules = loaded->rules;
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
  KernelTable kernels = providers.first().kernels;
  declare_cpu_fallback_ops(kernels);
  KernelGate gate(kernels);
  ro.gate = &gate;
  RewriteReport rep = run_rewrites_by_level(model, rules, ro);
  // A rule set that does not terminate: the model is refused (exit 2), naming it and the rules.
  if (rep.stop != StopReason::Saturated)
    throw_bad_input((model.path.empty() ? std::string("the model") : model.path) + ": " + rep.stop_message);
  report.explain.records = std::move(rep.explain);
  report.skipped = rep.skipped;
  for (const auto& [name, n] : rep.rules_fired) report.rules_fired[name] = n;
  for (const TraceRecord& t : rep.trace) report.trace.push_back(t.str());
  report.rule_set_hash = rule_set_hash_of_files(options, loaded->files, files);
  stamp_optimized(model, options, report.rule_set_hash);
  report.provider_nodes = partition_model(model, providers, false).nodes_per_provider;
  FUSOR_LOG(Info) << "level '" << opt_level_name(options.level) << "': " << rules.size() << " rules, "
                  << rep.rewrites << " rewrites (" << stop_reason_name(rep.stop) << ")";
  return report;
}

}  // namespace fusor
