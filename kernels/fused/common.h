// What the fusor-domain kernels share: registration, the fallback from a fast kernel to the
// reference one, and output writing for the reference kernels.
#pragma once
#include <memory>
#include <string>

#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/gemm/gemm.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"

namespace fusor::fused {

using ::fusor::const_float;
using ::fusor::gemm_run;
using ::fusor::kFastPriority;
using ::fusor::known_not_float;
using ::fusor::make_reference;
using FastFusedKernel = ::fusor::FastKernel;

template <class K>
void add_fused_kernel(KernelRegistry& r, const char* op, const char* impl, int priority) {
  r.add(kFusorDomain, op, impl, priority,
        [](const KernelInfo& info) -> std::unique_ptr<Kernel> { return std::make_unique<K>(info); });
}

// Copies a computed tensor into output i.
void write_output(KernelContext& ctx, int i, const Tensor& t);

void register_fused_conv_kernels(KernelRegistry& r);
void register_fused_winograd_kernels(KernelRegistry& r);
void register_fused_winograd_filter_kernels(KernelRegistry& r);
void register_fused_gemm_kernels(KernelRegistry& r);
void register_fused_elementwise_kernels(KernelRegistry& r);
void register_fused_norm_kernels(KernelRegistry& r);
void register_fused_attention_kernels(KernelRegistry& r);
void register_fused_multi_head_attention_kernels(KernelRegistry& r);
void register_fused_pool_kernels(KernelRegistry& r);
void register_onnx_activation_kernels(KernelRegistry& r);

}  // namespace fusor::fused
