// The optimization entry point: optimization levels, options and the report.
//
// Levels: OptLevel (core/pattern/level.h), as in ONNX Runtime.
// Rules: the provider definition providers/<first provider>.provider names the rule files of each
// level (`rules basic: ...`); they are found under shipped_rules_root(). --rules files are added,
// --no-default-rules drops the provider's files. The rules selected for the level and provider are
// lowered (dsl/lower.h) and run with the built-in passes by run_rewrites.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/pattern/level.h"
#include "core/ir/model.h"
#include "engine/rewrite/explain.h"
#include "engine/session/provider_catalog.h"

namespace fusor {

struct OptimizeOptions {
  OptLevel level = OptLevel::All;
  std::vector<std::string> providers = {"cpu"};  // priority list
  std::vector<std::string> rule_files;           // extra rule files (--rules)
  std::vector<std::string> disabled;             // rules or built-in passes to skip (--disable)
  bool no_default_rules = false;                 // drop the shipped rule files (--no-default-rules)
  bool trace = false;                            // record every rewrite (--trace)
  std::string explain_rule;                      // fusor explain: record this rule's outcomes (report.explain)
  std::string rules_root;                        // where providers/ and rules/ are; "" = shipped_rules_root()
};

struct OptimizeReport {
  // Rule or built-in pass name -> times it fired.
  std::map<std::string, int64_t> rules_fired;
  // One line per rewrite when OptimizeOptions::trace is set.
  std::vector<std::string> trace;
  // When options.explain_rule is set: the rule's facts and its outcome at every root it was tried
  // at. An unknown rule name is Error(Usage) (engine/session/explain_rule.h).
  ExplainResult explain;
  // Rewrites not applied because the first provider's kernel declarations cannot run their result.
  int skipped = 0;
  // rule_set_hash(options) of this run ("" at level disabled).
  std::string rule_set_hash;
  // Top-level nodes each provider of the chain runs after optimization (engine/session/partition.h);
  // empty at level disabled.
  std::map<std::string, int64_t> provider_nodes;
};

// The directory holding the shipped `providers/` and `rules/` folders (rules_root.cpp):
// $FUSOR_RULES_DIR, else an installed package's share/fusor, else the source tree fusor was built
// from (compiled in).
std::string shipped_rules_root();
// The provider's rule files at `level` (none at disabled). A bad provider definition is
// Error(BadInput) carrying its diagnostics. `root` overrides shipped_rules_root() when not empty.
std::vector<std::string> default_rule_files(OptLevel level, const std::string& provider, const std::string& root = "");

// Optimizes the model in place. Throws Error(Usage) for bad options (unknown provider),
// Error(BadInput) for bad rule files, and for a model fusor already optimized for a provider
// that is not in options.providers (its fused ops target that provider's kernels).
// After rewriting at a level above disabled: the `fusor` opset import is added when fusor-domain
// ops are present, and the metadata stamp records provider, level and rule-set hash.
// Problems in rule files or provider definitions are Error(BadInput) whose details() are the
// diagnostics (FILE:LINE:COL); nothing is printed. Rule warnings go to the logger. A rule set that
// does not terminate is Error(BadInput) naming the model and the rules (FILE:LINE).
OptimizeReport optimize(Model& model, const OptimizeOptions& options);
// The same with the providers already loaded (ProviderCatalog::load_or_throw(options.providers,
// options.rules_root); not read at level disabled): each definition is read once per optimization.
OptimizeReport optimize(Model& model, const OptimizeOptions& options, const ProviderCatalog& providers);

}  // namespace fusor
