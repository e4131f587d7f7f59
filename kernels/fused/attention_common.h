// What the attention ops' kernels (fusor.Attention, fusor.MultiHeadAttention,
// fusor.PackedAttention) share: the reference composition, the mask's addressing for the fast
// core (flash_attention.h), and the recognition of a constant causal mask.
#pragma once
#include <cstdint>
#include <vector>

#include "core/ir/tensor.h"
#include "kernels/fused/inner_op.h"
#include "kernels/kernel.h"

namespace fusor::fused {

// scale 0 means 1/sqrt(head size).
float attention_scale(float attr, int64_t d);

// Softmax(Q x K^T * scale + Mask) x V over the last two axes by ONNX's reference kernels
// (Transpose/MatMul/Mul/Add/Where/Softmax/MatMul), the causal mask written out as an additive
// -inf matrix. Q (..., Lq, d), K (..., Lk, d) or with transpose_k (..., d, Lk), V (..., Lk, dv).
// A fully masked row is NaN here (Softmax of all -inf).
class AttentionReference {
 public:
  AttentionReference();
  Tensor run(KernelContext& ctx, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask, float scale_attr,
             bool causal, bool transpose_k) const;

 private:
  InnerOp matmul_, mul_, add_, where_, softmax_;
};

// The mask's addressing for scores of shape `scores` (batch axes..., Lq, Lk), the batch axes
// flattened: element (n, i, j) at base[n] + i * row + j * col. False when the mask does not
// broadcast to the scores.
bool mask_addressing(const Shape& mask, const Shape& scores, std::vector<int64_t>& base, int64_t& row, int64_t& col);

// Whether a constant mask (bool: true where allowed; float: 0 where allowed, -inf elsewhere) is
// the causal one of its last two axes (Lq, Lk): allowed exactly where j <= i + Lk - Lq, the same
// for every index of the leading axes.
bool is_causal_mask(const Tensor& mask);

}  // namespace fusor::fused
