#include "engine/session/provider_def.h"

#include "core/util/error.h"
#include "engine/session/optimize.h"

namespace fusor {

std::unique_ptr<dsl::ProviderDef> load_provider_def(const std::string& provider, const std::string& root) {
  std::string path = (root.empty() ? shipped_rules_root() : root) + "/providers/" + provider + ".provider";
  dsl::Diagnostics diags;
  auto def = dsl::load_provider(path, {}, diags);
  if (!def || diags.has_errors()) {
    // The diagnostics travel in the error's text (a host app or a notebook sees no stderr).
    throw_bad_input(diags.error_text("provider '" + provider + "' (" + path + "): ", "the definition"));
  }
  return def;
}

}  // namespace fusor
