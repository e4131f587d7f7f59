// The rule-set hash: one value that changes whenever the rules an optimization applies could
// change. It covers the texts of the provider definitions (every provider of the list), of every
// rule file used (the provider's files for the level unless --no-default-rules, the --rules
// files, and everything they import), the --disable list and --no-default-rules. Paths are not
// part of it: the same texts elsewhere hash the same. Level and provider list are recorded
// beside it (model metadata, cache key), not inside it.
//
// Cheap: rule files are parsed for their imports only (no checking). A file that cannot be read
// hashes as its path plus a marker, so the hash still differs from a readable file's; optimize()
// reports the missing file itself.
//
// Used for the `fusor.rule_set_hash` metadata of saved models and by the optimized-session cache.
#pragma once
#include <string>

#include "engine/session/optimize.h"

namespace fusor {

// 16 lowercase hex digits (64-bit FNV-1a over length-prefixed parts).
std::string rule_set_hash(const OptimizeOptions& options);
// The same when the caller knows the rule files named directly (`top_files`: the first provider's
// files for the level, then --rules), so no provider definition is parsed again.
std::string rule_set_hash(const OptimizeOptions& options, const std::vector<std::string>& top_files);

// The same over the rule files already read by a loader (`read`: every rule file, imports included,
// in load order: LoadedRuleSet::files; `top_files` as above), so nothing is parsed again.
std::string rule_set_hash_of_files(const OptimizeOptions& options, const std::vector<std::string>& read,
                                   const std::vector<std::string>& top_files);

// The rule and provider files rule_set_hash reads, in hashing order (for diagnostics and tests).
std::vector<std::string> rule_set_files(const OptimizeOptions& options);
std::vector<std::string> rule_set_files(const OptimizeOptions& options, const std::vector<std::string>& top_files);

}  // namespace fusor
