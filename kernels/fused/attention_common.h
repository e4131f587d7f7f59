// What the attention ops' kernels (fusor.Attention, fusor.MultiHeadAttention,
// fusor.PackedAttention) share: the reference composition, the mask's addressing for the fast
// core (flash_attention.h), and the recognition of a constant causal mask.
#pragma once
#include <cstdint>
#include <vector>

#include "core/ir/tensor.h"
#include "kernels/fused/flash_attention.h"
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

// The mask input as the fast core reads it. `bind` takes the run's mask and the scores' shape
// (batch axes..., Lq, Lk): a mask equal to the constant causal one recognized at kernel creation
// (`causal_shape`, empty when none) becomes `causal` with no mask read; false when the fast core
// cannot read the mask (neither float nor bool, or not broadcasting to the scores).
struct AttnMask {
  const Tensor* mask = nullptr;
  bool causal = false;
  std::vector<int64_t> base;
  int64_t row = 0, col = 0;
  bool bind(const Tensor* m, const Shape& scores, bool causal_attr, const Shape& causal_shape);
};

// Sets `p`'s mask, scale and causal fields from `mask` and runs the fast core on the context's
// threads and scratch.
void run_flash_attention(AttnProblem& p, const AttnMask& mask, float scale_attr, KernelContext& ctx);

}  // namespace fusor::fused
