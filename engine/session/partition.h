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
// a warning says why once, and its nodes go to the next provider.
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

#include "dsl/provider.h"
#include "core/ir/model.h"

namespace fusor {

struct ProviderChain {
  std::vector<std::unique_ptr<dsl::ProviderDef>> defs;  // priority order, cpu last
  std::vector<std::string> unavailable;                 // requested but not built, with the reason
};

// Loads the definitions of `providers` (unknown names: Error(Usage) listing the known ones; a
// definition with errors: diagnostics on stderr and Error(BadInput)), cpu appended when missing.
ProviderChain load_provider_chain(const std::vector<std::string>& providers, const std::string& rules_root = "");

// Why a provider's kernels are not built ("" when they are; always "" for cpu).
std::string provider_unavailable_reason(const std::string& provider);

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
Partition partition_model(const Model& model, const ProviderChain& chain, bool require_all = true);

}  // namespace fusor
