// Runs a kernel's float code on float16 / bfloat16 tensors: inputs of those types are widened to
// float copies, and every Float output the kernel allocates is narrowed back into an output of
// the original half type when compute returns. For ops whose output type follows their input
// type (arithmetic, activations, reductions); outputs of other types (bool, int64) pass through.
//
//   void compute(KernelContext& ctx) override {
//     if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
//     ...float/double/int code...
//   }
#pragma once
#include <functional>

#include "kernels/kernel.h"

namespace fusor {

bool has_half_input(const KernelContext& ctx);
void compute_widened(KernelContext& ctx, const std::function<void(KernelContext&)>& body);

}  // namespace fusor
