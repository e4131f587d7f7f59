// Loading a provider's definition (providers/NAME.provider) for the engine: its kernel
// declarations gate rewrites (engine/rewrite/kernel_gate.h).
#pragma once
#include <memory>
#include <string>

#include "dsl/provider.h"

namespace fusor {

// `root`/providers/`provider`.provider, `root` defaulting to shipped_rules_root(). A definition
// with errors prints its diagnostics on stderr and throws Error(BadInput) (exit 2).
std::unique_ptr<dsl::ProviderDef> load_provider_def(const std::string& provider, const std::string& root = "");

}  // namespace fusor
