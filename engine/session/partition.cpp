#include "engine/session/partition.h"

#include <iostream>
#include <set>

#include "core/util/error.h"
#include "engine/rewrite/kernel_gate.h"
#include "engine/rewrite/normalize.h"
#include "engine/session/optimize.h"
#include "engine/session/provider_def.h"
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

std::string provider_unavailable_reason(const std::string& provider) {
  if (provider == "cpu") return "";
  if (provider == "xnnpack" && !xnnpack::xnnpack_status().empty()) return xnnpack::xnnpack_status();
  if (!has_impl_named(provider)) return "fusor has no kernels built for provider '" + provider + "'";
  return "";
}

ProviderChain load_provider_chain(const std::vector<std::string>& providers, const std::string& rules_root) {
  ProviderChain chain;
  std::vector<std::string> names = providers;
  bool has_cpu = false;
  for (const std::string& p : names) has_cpu = has_cpu || p == "cpu";
  if (!has_cpu) names.push_back("cpu");
  std::set<std::string> seen;
  for (const std::string& p : names) {
    check_provider(p);
    if (!seen.insert(p).second) continue;
    if (std::string why = provider_unavailable_reason(p); !why.empty()) {
      chain.unavailable.push_back(p + ": " + why);
      std::cerr << "fusor: warning: provider '" << p << "' is unavailable (" << why << "); its nodes run on the next provider\n";
      continue;
    }
    chain.defs.push_back(load_provider_def(p, rules_root));
  }
  return chain;
}

std::string Partition::kernel_impl(const Node& n) const {
  auto it = provider_of.find(&n);
  if (it == provider_of.end() || it->second == "cpu") return "";
  return it->second;
}

Partition partition_model(const Model& model, const ProviderChain& chain, bool require_all) {
  Partition part;
  const Graph& g = *model.graph;
  for (const auto& def : chain.defs) {
    part.providers.push_back(def->name);
    part.nodes_per_provider[def->name] = 0;
  }
  NormCache norm(g);
  MatchEnv env{g, norm, model.opset(""), 0};
  const KernelRegistry& registry = KernelRegistry::global();
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id)) {
    const Node& n = g.node(id);
    const int64_t opset = model.opset(n.op.domain());
    std::string chosen;
    for (const auto& def : chain.defs) {
      const bool is_cpu = def->name == "cpu";
      if (!registry.find(n.op, opset, is_cpu ? std::string_view() : std::string_view(def->name))) continue;
      KernelGate gate(*def);
      if (gate.restricts() && !gate.cannot_run(env, id).empty()) continue;
      chosen = def->name;
      break;
    }
    if (chosen.empty() && !require_all) {
      ++part.nodes_per_provider["(none)"];
      continue;
    }
    if (chosen.empty()) {
      std::string tried;
      for (const std::string& p : part.providers) tried += (tried.empty() ? "" : ", ") + p;
      throw_bad_input(n.describe() + ": no provider can run it (tried: " + tried + ")");
    }
    part.provider_of[&n] = chosen;
    ++part.nodes_per_provider[chosen];
  }
  return part;
}

}  // namespace fusor
