// What the fusor-domain kernels share: registration, the fallback from a fast kernel to the
// reference one, and output writing for the reference kernels.
#pragma once
#include <memory>
#include <string>

#include "kernels/common/kernel_util.h"
#include "kernels/gemm/gemm.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"

namespace fusor::fused {

inline constexpr int kFastPriority = 10;

template <class K>
void add_fused_kernel(KernelRegistry& r, const char* op, const char* impl, int priority) {
  r.add(kFusorDomain, op, impl, priority,
        [](const KernelInfo& info) -> std::unique_ptr<Kernel> { return std::make_unique<K>(info); });
}

// The registry's "reference" kernel for the node (fast kernels keep one for what they skip).
std::unique_ptr<Kernel> make_reference(const KernelInfo& info);

// Whether input i is statically known to be of another element type than float.
bool known_not_float(const KernelInfo& info, size_t i);

// The constant value of input i when it is a float tensor, else null.
const Tensor* const_float(const KernelInfo& info, size_t i);

GemmRun gemm_run(KernelContext& ctx);

// Copies a computed tensor into output i.
void write_output(KernelContext& ctx, int i, const Tensor& t);

// Base of the fast kernels: a fallback to the reference kernel, created up front.
class FastFusedKernel : public Kernel {
 protected:
  explicit FastFusedKernel(const KernelInfo& info) : where_(info.where()), fallback_(make_reference(info)) {}
  std::string where_;
  std::unique_ptr<Kernel> fallback_;
};

void register_fused_conv_kernels(KernelRegistry& r);
void register_fused_gemm_kernels(KernelRegistry& r);
void register_fused_elementwise_kernels(KernelRegistry& r);
void register_fused_norm_kernels(KernelRegistry& r);
void register_fused_attention_kernels(KernelRegistry& r);
void register_fused_pool_kernels(KernelRegistry& r);

}  // namespace fusor::fused
