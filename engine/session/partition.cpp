#include "engine/session/partition.h"

#include <set>

#include "core/util/error.h"
#include "engine/rewrite/kernel_gate.h"
#include "engine/rewrite/normalize.h"
#include "engine/session/optimize.h"
#include "kernels/kernel.h"

namespace fusor {

std::string Partition::kernel_impl(const Node& n) const {
  auto it = provider_of.find(&n);
  if (it == provider_of.end() || it->second == "cpu") return "";
  return it->second;
}

Partition partition_model(const Model& model, const ProviderCatalog& providers, bool require_all) {
  Partition part;
  const Graph& g = *model.graph;
  std::vector<const ProviderInfo*> chain;  // the available providers, priority order, cpu last
  for (const ProviderInfo& p : providers.all()) {
    if (!p.unavailable.empty()) continue;
    chain.push_back(&p);
    part.providers.push_back(p.name);
    part.nodes_per_provider[p.name] = 0;
  }
  NormCache norm(g);
  MatchEnv env{g, norm, model.opset(""), 0};
  const KernelRegistry& registry = KernelRegistry::global();
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id)) {
    const Node& n = g.node(id);
    const int64_t opset = model.opset(n.op.domain());
    std::string chosen;
    for (const ProviderInfo* p : chain) {
      const bool is_cpu = p->name == "cpu";
      if (!registry.find(n.op, opset, is_cpu ? std::string_view() : std::string_view(p->name))) continue;
      KernelGate gate(p->kernels);
      if (gate.restricts() && !gate.cannot_run(env, id).empty()) continue;
      chosen = p->name;
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
