// What the XNNPACK kernels share: their registry name and priority, the clamp they fuse, and
// helpers to read constant inputs.
#pragma once
#include <limits>
#include <optional>

#include "kernels/epilogue.h"
#include "kernels/kernel.h"
#include "kernels/thread_pool.h"
#include "kernels/xnnpack/xnn_runtime.h"

namespace fusor::xnnpack {

// The implementation name the partitioner asks the registry for.
inline constexpr const char* kImpl = "xnnpack";
// Below every cpu implementation, so the registry's default choice never picks XNNPACK: it runs
// only on the nodes the partitioner assigns to the `xnnpack` provider.
inline constexpr int kPriority = -100;

struct Clamp {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
};
// The output range of a clamp activation (none, Relu, Clip); nullopt for any other activation.
std::optional<Clamp> clamp_of(const ActivationSpec& act);

// The constant float tensor of input i, or null.
const Tensor* const_float_input(const KernelInfo& info, size_t i);
// Whether input i's element type is statically known and is not float.
bool input_known_not_float(const KernelInfo& info, size_t i);

void register_xnnpack_conv(KernelRegistry& r);
void register_xnnpack_pool(KernelRegistry& r);
void register_xnnpack_fully_connected(KernelRegistry& r);
void register_xnnpack_deconv(KernelRegistry& r);

}  // namespace fusor::xnnpack
