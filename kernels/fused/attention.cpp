// fusor.Attention: Y = Softmax(Q x K^T * scale + Mask) x V over the last two axes.
//   Q (..., Lq, d), K (..., Lk, d) or, with transpose_k, (..., d, Lk), V (..., Lk, dv) -> Y (..., Lq, dv).
//   scale 0 means 1/sqrt(d). Mask broadcasts to the scores (..., Lq, Lk): a float Mask is added,
//   a bool Mask is true where attention is allowed. causal: query i sees keys j <= i + Lk - Lq
//   (aligned at the end, so a query block at the end of a cache sees the whole past).
//
//   reference: AttentionReference (attention_common.h), ONNX's reference kernels composed.
//   fast:      the flash-attention core (flash_attention.h), batch axes flattened; a constant
//              causal mask runs as causal (its masked blocks skipped). float32, Q/K/V with the same
//              batch dims; anything else goes to the reference. A fully masked row gives 0.
#include <algorithm>
#include <vector>

#include "kernels/common/broadcast.h"
#include "kernels/common/float16_widening.h"
#include "kernels/fused/attention_common.h"
#include "kernels/fused/common.h"
#include "kernels/fused/flash_attention.h"

namespace fusor::fused {
namespace {

struct AttnShape {
  int64_t batch = 1, lq = 0, lk = 0, d = 0, dv = 0;
  Shape batch_dims;
};

AttnShape attn_shape(const Shape& q, const Shape& k, const Shape& v, bool transpose_k, const std::string& where) {
  if (q.size() < 2 || k.size() < 2 || v.size() < 2)
    throw_bad_input(where + ": Q, K and V must have rank >= 2, got " + shape_str(q) + ", " + shape_str(k) + ", " + shape_str(v));
  AttnShape s;
  s.lq = q[q.size() - 2], s.d = q.back();
  s.lk = transpose_k ? k.back() : k[k.size() - 2];
  const int64_t kd = transpose_k ? k[k.size() - 2] : k.back();
  s.dv = v.back();
  if (kd != s.d) throw_bad_input(where + ": Q's head size " + std::to_string(s.d) + " differs from K's " + std::to_string(kd));
  if (v[v.size() - 2] != s.lk)
    throw_bad_input(where + ": V has " + std::to_string(v[v.size() - 2]) + " keys, K has " + std::to_string(s.lk));
  s.batch_dims.assign(q.begin(), q.end() - 2);
  s.batch = shape_numel(s.batch_dims);
  return s;
}

class RefAttention : public Kernel {
 public:
  explicit RefAttention(const KernelInfo& info)
      : scale_(info.n().attr_float("scale", 0.0f)),
        causal_(info.n().attr_int("causal", 0) != 0),
        transpose_k_(info.n().attr_int("transpose_k", 0) != 0) {}

  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& q = required_input(ctx, 0);
    const Tensor& k = required_input(ctx, 1);
    const Tensor& v = required_input(ctx, 2);
    attn_shape(q.shape(), k.shape(), v.shape(), transpose_k_, ctx.where());
    write_output(ctx, 0, ref_.run(ctx, q, k, v, optional_input(ctx, 3), scale_, causal_, transpose_k_));
  }

 private:
  float scale_;
  bool causal_, transpose_k_;
  AttentionReference ref_;
};

class FastAttention : public FastFusedKernel {
 public:
  explicit FastAttention(const KernelInfo& info)
      : FastFusedKernel(info),
        scale_(info.n().attr_float("scale", 0.0f)),
        causal_(info.n().attr_int("causal", 0) != 0),
        transpose_k_(info.n().attr_int("transpose_k", 0) != 0) {
    const TensorPtr m = info.const_inputs.size() > 3 ? info.const_inputs[3] : nullptr;
    if (m && is_causal_mask(*m)) causal_mask_shape_ = m->shape();
  }

  void compute(KernelContext& ctx) override {
    const Tensor& q = required_input(ctx, 0);
    const Tensor& k = required_input(ctx, 1);
    const Tensor& v = required_input(ctx, 2);
    const Tensor* mask = optional_input(ctx, 3);
    const AttnShape s = attn_shape(q.shape(), k.shape(), v.shape(), transpose_k_, where_);
    const Shape k_batch(k.shape().begin(), k.shape().end() - 2), v_batch(v.shape().begin(), v.shape().end() - 2);
    Shape score_shape = s.batch_dims;
    score_shape.push_back(s.lq);
    score_shape.push_back(s.lk);
    AttnMask am;
    if (q.dtype() != DataType::Float || k.dtype() != DataType::Float || v.dtype() != DataType::Float ||
        k_batch != s.batch_dims || v_batch != s.batch_dims || !am.bind(mask, score_shape, causal_, causal_mask_shape_))
      return fallback_->compute(ctx);
    Shape out = s.batch_dims;
    out.push_back(s.lq);
    out.push_back(s.dv);
    Tensor& y = ctx.output(0, out, DataType::Float);
    if (y.numel() == 0) return;

    AttnProblem p;
    p.batch = s.batch;
    p.sq = s.lq, p.sk = s.lk, p.d = s.d, p.dv = s.dv;
    p.q = {q.data<float>(), s.lq * s.d, 0, s.d};
    p.v = {v.data<float>(), s.lk * s.dv, 0, s.dv};
    p.k = k.data<float>();
    p.k_batch = s.lk * s.d;
    p.k_key = transpose_k_ ? 1 : s.d;
    p.k_dim = transpose_k_ ? s.lk : 1;
    p.y = y.data<float>();
    p.y_batch = s.lq * s.dv, p.y_row = s.dv;
    run_flash_attention(p, am, scale_, ctx);
  }

 private:
  float scale_;
  bool causal_, transpose_k_;
  Shape causal_mask_shape_;
};

}  // namespace

void register_fused_attention_kernels(KernelRegistry& r) {
  add_fused_kernel<RefAttention>(r, "Attention", "reference", 0);
  r.add(kFusorDomain, "Attention", "fast", kFastPriority, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    if (known_not_float(info, 0)) return make_reference(info);
    return std::make_unique<FastAttention>(info);
  });
}

}  // namespace fusor::fused
