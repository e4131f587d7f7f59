#include "kernels/fused/attention_common.h"

#include <cmath>
#include <limits>

#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"

namespace fusor::fused {

float attention_scale(float attr, int64_t d) { return attr != 0.0f ? attr : 1.0f / std::sqrt(static_cast<float>(d)); }

AttentionReference::AttentionReference()
    : matmul_("MatMul", 2),
      mul_("Mul", 2),
      add_("Add", 2),
      where_("Where", 3),
      softmax_("Softmax", 1, {Attribute::make_int("axis", -1)}) {}

Tensor AttentionReference::run(KernelContext& ctx, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                               float scale_attr, bool causal, bool transpose_k) const {
  const int64_t d = q.dim(-1);
  const int64_t lq = q.dim(-2), lk = transpose_k ? k.dim(-1) : k.dim(-2);
  const Tensor kt = transpose_k ? k : permuted(k, swap_last_two(k.rank()));
  Tensor scores = matmul_.run1(ctx, {&q, &kt});
  dispatch_float(scores.dtype(), ctx.where(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Tensor sc = Tensor::scalar<T>(static_cast<T>(attention_scale(scale_attr, d)));
    scores = mul_.run1(ctx, {&scores, &sc});
    if (mask && mask->dtype() == DataType::Bool) {
      const Tensor ninf = Tensor::scalar<T>(-std::numeric_limits<T>::infinity());
      scores = where_.run1(ctx, {mask, &scores, &ninf});
    } else if (mask) {
      scores = add_.run1(ctx, {&scores, mask});
    }
    if (causal) {
      Tensor c(scores.dtype(), {lq, lk});
      for (int64_t i = 0; i < lq; ++i)
        for (int64_t j = 0; j < lk; ++j)
          c.data<T>()[i * lk + j] = j <= i + lk - lq ? T(0) : -std::numeric_limits<T>::infinity();
      scores = add_.run1(ctx, {&scores, &c});
    }
  });
  const Tensor probs = softmax_.run1(ctx, {&scores});
  return matmul_.run1(ctx, {&probs, &v});
}

bool mask_addressing(const Shape& mask, const Shape& scores, std::vector<int64_t>& base, int64_t& row, int64_t& col) {
  if (!broadcasts_to(mask, scores) || scores.size() < 2) return false;
  const int r = static_cast<int>(scores.size()), mr = static_cast<int>(mask.size());
  std::vector<int64_t> stride(r, 0);
  int64_t st = 1;
  for (int dd = mr - 1; dd >= 0; --dd) {
    const int od = dd + (r - mr);
    stride[od] = mask[dd] == 1 ? 0 : st;
    st *= mask[dd];
  }
  row = stride[r - 2];
  col = stride[r - 1];
  int64_t batch = 1;
  for (int dd = 0; dd < r - 2; ++dd) batch *= scores[dd];
  base.assign(static_cast<size_t>(batch), 0);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t rem = b, o = 0;
    for (int dd = r - 3; dd >= 0; --dd) {
      o += (rem % scores[dd]) * stride[dd];
      rem /= scores[dd];
    }
    base[static_cast<size_t>(b)] = o;
  }
  return true;
}

bool is_causal_mask(const Tensor& mask) {
  if (mask.rank() < 2 || (mask.dtype() != DataType::Bool && mask.dtype() != DataType::Float)) return false;
  const int64_t lq = mask.dim(-2), lk = mask.dim(-1), plane = lq * lk;
  if (plane == 0) return false;
  const int64_t planes = mask.numel() / plane;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < lq; ++i)
      for (int64_t j = 0; j < lk; ++j) {
        const int64_t o = p * plane + i * lk + j;
        const bool want = j <= i + lk - lq;
        if (mask.dtype() == DataType::Bool) {
          if (mask.data<bool>()[o] != want) return false;
        } else {
          const float x = mask.data<float>()[o];
          if (want ? x != 0.0f : !(std::isinf(x) && x < 0)) return false;
        }
      }
  return true;
}

bool AttnMask::bind(const Tensor* m, const Shape& scores, bool causal_attr, const Shape& causal_shape) {
  mask = m;
  causal = causal_attr;
  if (mask && !causal_shape.empty() && mask->shape() == causal_shape && mask->dim(-2) == scores[scores.size() - 2] &&
      mask->dim(-1) == scores.back() && broadcasts_to(mask->shape(), scores)) {
    causal = true;  // the constant mask is the causal one: computed, its masked blocks skipped
    mask = nullptr;
  }
  if (!mask) return true;
  return (mask->dtype() == DataType::Float || mask->dtype() == DataType::Bool) &&
         mask_addressing(mask->shape(), scores, base, row, col);
}

void run_flash_attention(AttnProblem& p, const AttnMask& mask, float scale_attr, KernelContext& ctx) {
  if (mask.mask) {
    if (mask.mask->dtype() == DataType::Float) p.fmask = mask.mask->data<float>();
    else p.bmask = mask.mask->data<bool>();
    p.mask_base = mask.base.data();
    p.mask_row = mask.row, p.mask_col = mask.col;
  }
  p.scale = attention_scale(scale_attr, p.d);
  p.causal = mask.causal;
  flash_attention(p, ctx.threads(), [&ctx](size_t bytes) { return ctx.scratch(bytes); }, active_isa());
}

}  // namespace fusor::fused
