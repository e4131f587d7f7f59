// Partitioning a model across execution providers (issue 7, as ONNX Runtime's GetCapability):
// each node goes to the first provider of the priority list that can run it; `cpu` is always
// the last fallback (appended when the list lacks it).
//
// A provider can run a node when
//   - its definition (providers/NAME.provider) declares the node's op, and a declaration's
//     condition holds for the node (engine/rewrite/kernel_gate.h), or the definition has no
//     `kernels` block (cpu: every op fusor has a kernel for); and
//   - a kernel exists for it: for cpu the registry's default choice, for any other provider the
//     registry's implementation of that name (kernels/xnnpack registers "xnnpack").
// A provider that is declared but whose kernels are not built (XNNPACK absent) is unavailable:
// its nodes go to the next provider (ProviderCatalog::warnings() says why).
//
// The executor then creates each node's kernel from its provider's implementation
// (ExecOptions::kernel_impl_for). The layout conversion at the boundaries is already in the
// graph: the layout rules wrap each NHWC op in Transposes, so a node falling back to cpu reads
// and writes the layout its op defines.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/model.h"
#include "engine/session/provider_catalog.h"

namespace fusor {

struct Partition {
  std::vector<std::string> providers;                       // the chain, cpu last
  std::map<std::string, int64_t> nodes_per_provider;        // every provider of the chain, 0 included
  std::unordered_map<const Node*, std::string> provider_of;  // top-level nodes

  // The kernel implementation for a node: "" (the registry's default) for cpu, else the provider.
  std::string kernel_impl(const Node& n) const;
};

// Assigns every top-level node of the model's graph. A node that no provider, cpu included, can
// run is Error(BadInput): "node 'x' (Op): no provider can run it (tried: xnnpack, cpu)"; with
// `require_all` false (reports of `optimize`, which need not run the model) it is counted under
// "(none)" instead.
Partition partition_model(const Model& model, const ProviderCatalog& providers, bool require_all = true);

}  // namespace fusor
