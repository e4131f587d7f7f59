// What every "fast" kernel shares, ONNX or fusor domain: the reference kernel it hands the calls
// it does not cover to (created up front), constant-weight lookup, the GEMM core's run context,
// and registration that goes straight to the reference kernel when input 0 is statically not
// float.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "kernels/gemm/gemm.h"
#include "kernels/kernel.h"

namespace fusor {

inline constexpr int kFastPriority = 10;

// The registry's "reference" kernel for the node.
std::unique_ptr<Kernel> make_reference(const KernelInfo& info);

// Whether input i is statically known to be of another element type than float.
bool known_not_float(const KernelInfo& info, size_t i);

// The constant value of input i when it is a float tensor, else null.
const Tensor* const_float(const KernelInfo& info, size_t i);

// Input 1 as a constant 2-D float B, packed once for the GEMM core (as Bᵀ with trans_b) as the
// node's prepacked buffer "b" ("bt" with trans_b); an empty PackedB when it is not constant, not
// float or not 2-D.
PackedB pack_constant_b(const KernelInfo& info, bool trans_b);

// The session's threads and the node's scratch, for the GEMM core.
GemmRun gemm_run(KernelContext& ctx);

// Base of the fast kernels: the fallback to the reference kernel.
class FastKernel : public Kernel {
 protected:
  explicit FastKernel(const KernelInfo& info) : where_(info.where()), fallback_(make_reference(info)) {}
  std::string where_;
  std::unique_ptr<Kernel> fallback_;
};

// Registers K as the "fast" implementation of domain::op ("" for ONNX).
template <class K>
void add_fast_kernel(KernelRegistry& r, const char* domain, const char* op) {
  r.add(domain, op, "fast", kFastPriority, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    if (known_not_float(info, 0)) return make_reference(info);
    return std::make_unique<K>(info);
  });
}

}  // namespace fusor
