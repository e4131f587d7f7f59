// Registration of the blocked-layout (NCHWc) kernels: the reference kernels (reference.cpp) and
// the fast ones (fast_kernels.cpp) of fusor.ReorderToNchwc, ReorderFromNchwc, NchwcConv,
// NchwcAffine, NchwcMaxPool, NchwcAveragePool, NchwcGlobalAveragePool, NchwcGlobalMaxPool.
#pragma once

namespace fusor {
class KernelRegistry;
namespace nchwc {
void register_reference_kernels(KernelRegistry& r);
void register_fast_kernels(KernelRegistry& r);
}  // namespace nchwc
}  // namespace fusor
