#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "kernels/kernel.h"
#include "kernels/register.h"

namespace fusor {


KernelRegistry& KernelRegistry::global() {
  static KernelRegistry* r = [] {
    auto* reg = new KernelRegistry();
    // Each family registers here once its file exists (see register.h).
    register_nn_kernels(*reg);
    register_rnn_kernels(*reg);
    register_misc_kernels(*reg);
    register_elementwise_kernels(*reg);
    register_reduction_kernels(*reg);
    register_tensor_kernels(*reg);
    register_control_flow_kernels(*reg);
    register_sequence_kernels(*reg);
    register_fast_kernels(*reg);
    register_fast_pool_kernels(*reg);
    register_fast_conv_transpose_kernels(*reg);
    register_fast_rnn_kernels(*reg);
    register_fast_rowwise_kernels(*reg);
    register_fused_kernels(*reg);
    register_nchwc_kernels(*reg);
    register_int8_kernels(*reg);
    register_xnnpack_kernels(*reg);
    return reg;
  }();
  return *r;
}

void KernelRegistry::add(std::string_view domain, std::string_view op, std::string impl, int priority,
                         KernelFactory f, int since_version) {
  entries_.push_back(Entry{OpType(domain, op), std::move(impl), priority, since_version, std::move(f)});
}

const KernelRegistry::Entry* KernelRegistry::find(OpType op, int64_t opset, std::string_view impl) const {
  static const char* forced = std::getenv("FUSOR_KERNELS");
  std::string_view want = impl.empty() && forced ? std::string_view(forced) : impl;
  const Entry* best = nullptr;
  for (const Entry& e : entries_) {
    if (e.op != op || (opset > 0 && e.since_version > opset)) continue;
    if (!want.empty() && e.impl != want) continue;
    if (!best || e.priority > best->priority ||
        (e.priority == best->priority && e.since_version > best->since_version))
      best = &e;
  }
  // A forced implementation that does not exist for this op falls back to the default choice.
  if (!best && impl.empty() && forced) return find(op, opset, "reference");
  return best;
}

bool KernelRegistry::has(OpType op) const {
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.op == op; });
}

std::vector<OpType> KernelRegistry::ops() const {
  std::vector<OpType> out;
  for (const Entry& e : entries_)
    if (std::find(out.begin(), out.end(), e.op) == out.end()) out.push_back(e.op);
  std::sort(out.begin(), out.end(), [](OpType a, OpType b) { return a.qualified() < b.qualified(); });
  return out;
}

std::unique_ptr<Kernel> KernelRegistry::create(const KernelInfo& info, std::string_view impl) const {
  const Entry* e = find(info.node->op, info.opset, impl);
  if (!e) throw_bad_input(info.where() + ": no kernel for this op" + (info.opset ? " at opset " + std::to_string(info.opset) : std::string()));
  return e->factory(info);
}

}  // namespace fusor
