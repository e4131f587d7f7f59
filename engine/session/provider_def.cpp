#include "engine/session/provider_def.h"

#include <iostream>

#include "core/util/error.h"
#include "engine/session/optimize.h"

namespace fusor {

std::unique_ptr<dsl::ProviderDef> load_provider_def(const std::string& provider, const std::string& root) {
  std::string path = (root.empty() ? shipped_rules_root() : root) + "/providers/" + provider + ".provider";
  dsl::Diagnostics diags;
  auto def = dsl::load_provider(path, {}, diags);
  if (!def || diags.has_errors()) {
    std::cerr << diags.str();
    std::cerr.flush();
    throw_bad_input("provider '" + provider + "' (" + path + "): " + std::to_string(diags.error_count()) +
                    " error(s) in the definition (see above)");
  }
  return def;
}

}  // namespace fusor
