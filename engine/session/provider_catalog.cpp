#include "engine/session/provider_catalog.h"

#include <algorithm>
#include <filesystem>

#include "core/util/error.h"
#include "core/util/log.h"
#include "engine/session/optimize.h"
#include "kernels/kernel.h"
#include "kernels/xnnpack/xnn_runtime.h"

namespace fusor {

namespace {

bool has_impl_named(const std::string& impl) {
  const KernelRegistry& r = KernelRegistry::global();
  for (OpType op : r.ops())
    if (r.find(op, 0, impl)) return true;
  return false;
}

}  // namespace

std::string provider_path(const std::string& name, const std::string& rules_root) {
  return (rules_root.empty() ? shipped_rules_root() : rules_root) + "/providers/" + name + ".provider";
}

const std::vector<std::string>& known_providers() {
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

std::string provider_unavailable_reason(const std::string& provider) {
  if (provider == "cpu") return "";
  if (provider == "xnnpack" && !xnnpack::xnnpack_status().empty()) return xnnpack::xnnpack_status();
  if (!has_impl_named(provider)) return "fusor has no kernels built for provider '" + provider + "'";
  return "";
}

ProviderCatalog ProviderCatalog::load(const std::vector<std::string>& names, const std::string& rules_root,
                                      dsl::Diagnostics& diags) {
  std::vector<std::string> list = names;
  if (std::find(list.begin(), list.end(), "cpu") == list.end()) list.push_back("cpu");
  ProviderCatalog cat;
  for (const std::string& name : list) {
    check_provider(name);
    bool seen = false;
    for (const ProviderInfo& p : cat.providers_) seen |= p.name == name;
    if (seen) continue;
    ProviderInfo info;
    info.name = name;
    info.path = provider_path(name, rules_root);
    info.unavailable = provider_unavailable_reason(name);
    const size_t errors = diags.error_count();
    std::unique_ptr<dsl::ProviderDef> def = dsl::load_provider(info.path, {}, diags);
    if (def && diags.error_count() == errors) {
      info.kernels = def->kernel_table();
      info.def = std::move(def);
    }
    cat.providers_.push_back(std::move(info));
  }
  for (const std::string& w : cat.warnings()) FUSOR_LOG(Warn) << w;
  return cat;
}

ProviderCatalog ProviderCatalog::load_or_throw(const std::vector<std::string>& names, const std::string& rules_root) {
  dsl::Diagnostics diags;
  ProviderCatalog cat = load(names, rules_root, diags);
  if (diags.has_errors()) {
    std::string which;
    for (const ProviderInfo& p : cat.providers_)
      if (!p.def) which += (which.empty() ? "" : ", ") + ("'" + p.name + "' (" + p.path + ")");
    // The diagnostics travel in the error's text (a host app or a notebook sees no stderr).
    throw Error(ErrorKind::BadInput, diags.error_text("provider " + which + ": ", "the definition"));
  }
  return cat;
}

std::vector<std::string> ProviderCatalog::warnings() const {
  std::vector<std::string> out;
  for (const ProviderInfo& p : providers_)
    if (!p.unavailable.empty())
      out.push_back("provider '" + p.name + "' is unavailable (" + p.unavailable + "); its nodes run on the next provider");
  return out;
}

}  // namespace fusor
