// Lowered rule sets, kept for the life of the process. Every optimize() used to read, parse,
// check and lower every rule file again (twice: once more for the rule-set hash's import list):
// tens of milliseconds per session in a release build and seconds under the sanitizers, which is
// what a host creating many sessions, the tests and the fuzz targets paid on every model.
//
// load_rule_set(files, level, provider) returns the rules of `files` and their imports selected
// for `level` and `provider` (dsl RuleSet::select), lowered (dsl/lower.h), checked at the newest
// opset, with every file that was read. An entry is reused only while every file it read still
// holds the same bytes: each is read again and compared, which costs a small fraction of parsing,
// so an edited rule file takes effect in the next session of the same process. Problems are
// never cached: a file with an error fails every time with its diagnostics (Error(BadInput),
// FILE:LINE:COL). Warnings are logged on every load, hit or miss. Thread-safe; at most a few
// entries are kept (oldest dropped first).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/pattern/level.h"
#include "core/pattern/rule.h"

namespace fusor {

struct LoadedRuleSet {
  std::vector<Rule> rules;         // in priority order
  std::vector<std::string> files;  // every rule file read, imports before importers
  std::string warnings;            // the diagnostics text of warnings, "" when none
};

std::shared_ptr<const LoadedRuleSet> load_rule_set(const std::vector<std::string>& files, OptLevel level,
                                                   const std::string& provider);

// How many loads parsed the files (misses) and how many reused an entry (hits), for tests.
struct RuleCacheStats {
  int64_t hits = 0, misses = 0;
};
RuleCacheStats rule_cache_stats();

}  // namespace fusor
