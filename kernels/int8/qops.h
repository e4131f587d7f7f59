// What the kernels of the quantized fusor ops share (internal to kernels/int8): their attributes
// read into quantization parameters, the lookup loop, and the registration functions.
#pragma once
#include <cstdint>

#include "core/ir/graph.h"
#include "kernels/int8/qconv.h"

namespace fusor {
class KernelRegistry;
class ThreadPool;

namespace int8 {

// uint8 or int8: the element types of the quantized tensors.
inline bool is_8bit(DataType t) { return t == DataType::UInt8 || t == DataType::Int8; }

// QConv / NhwcQConv attributes: x, y, the residual's conv and z parameters, the activation's clamp.
// Throws BadInput naming the node for a non-positive scale or an activation that is not a clamp.
QConvSpec qconv_params(const Node& n);

struct QBinaryParams {
  QParam a, b, y;
  float act_lo = -3.0e38f, act_hi = 3.0e38f;
};
QBinaryParams qbinary_params(const Node& n);

// The clamp of a "" / Relu / Clip activation attribute, in real values.
void activation_clamp(const Node& n, float& lo, float& hi);

// y[i] = table[x[i]], or table[x[i] + 128] for int8 x (bytes either way).
void qlookup(const uint8_t* x, bool x_signed, const uint8_t* table, uint8_t* y, int64_t n, ThreadPool* pool);

void register_int8_reference_kernels(KernelRegistry& r);
void register_int8_conv_kernels(KernelRegistry& r);
void register_int8_matmul_kernels(KernelRegistry& r);
void register_int8_dynamic_matmul_kernels(KernelRegistry& r);
void register_int8_binary_kernels(KernelRegistry& r);
void register_int8_quantize_kernels(KernelRegistry& r);
void register_int8_pool_kernels(KernelRegistry& r);

}  // namespace int8
}  // namespace fusor
