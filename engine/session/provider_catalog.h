// The providers one optimization uses, each definition read, checked and lowered once (issue 19:
// optimize() used to parse a provider file up to 3 times, and 4 files built its path by hand).
//
// A definition is ROOT/providers/NAME.provider; provider_path() is the one place that path is
// built (ROOT: OptimizeOptions::rules_root, else shipped_rules_root()). The known providers are
// the definitions found there (a user's variant is a new text file, no recompiling).
//
// Loading never prints. load() returns problems as diagnostics (FILE:LINE:COL: error: ..., the
// source line, a caret); load_or_throw() turns them into one Error(BadInput) whose details are
// those diagnostics. An unknown provider name is Error(Usage) listing the known ones.
//
// The catalog holds the requested providers in priority order, each once, with cpu appended as
// the last fallback when the list lacks it. The first one's rules and kernel declarations drive
// the rewrite; partitioning (partition.h) gives each node to the first available provider that can
// run it. A provider whose kernels are not built (XNNPACK absent) is unavailable: it keeps its
// definition, its rules still run, and its nodes go to the next provider.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/pattern/kernel_table.h"
#include "dsl/diagnostics.h"
#include "dsl/provider.h"

namespace fusor {

// ROOT/providers/NAME.provider, ROOT = rules_root or shipped_rules_root() when empty.
std::string provider_path(const std::string& name, const std::string& rules_root = "");

// The providers defined under shipped_rules_root(): cpu first, the rest by name.
const std::vector<std::string>& known_providers();
// Throws Error(Usage) naming the provider and listing the known ones.
void check_provider(const std::string& name);
// Why a provider's kernels are not built ("" when they are; always "" for cpu).
std::string provider_unavailable_reason(const std::string& provider);

struct ProviderInfo {
  std::string name;
  std::string path;
  std::shared_ptr<const dsl::ProviderDef> def;  // null when it could not be read or parsed
  KernelTable kernels;                          // its kernels block lowered (empty: every op)
  std::string unavailable;                      // why its kernels are not built ("" when they are)
};

class ProviderCatalog {
 public:
  // Loads `names` (priority order) and cpu. Problems in a definition go to `diags`.
  static ProviderCatalog load(const std::vector<std::string>& names, const std::string& rules_root,
                              dsl::Diagnostics& diags);
  // The same; a definition with errors is Error(BadInput) carrying the diagnostics.
  static ProviderCatalog load_or_throw(const std::vector<std::string>& names, const std::string& rules_root = "");

  // The first provider of the list: its rule files and kernel declarations drive the rewrite.
  const ProviderInfo& first() const { return providers_.front(); }
  // Every provider, priority order, cpu last.
  const std::vector<ProviderInfo>& all() const { return providers_; }
  // Warnings about unavailable providers ("provider 'xnnpack' is unavailable (...); its nodes run
  // on the next provider"), for the caller to show.
  std::vector<std::string> warnings() const;

 private:
  std::vector<ProviderInfo> providers_;
};

}  // namespace fusor
