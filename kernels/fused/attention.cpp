// Attention: Y = Softmax(Q x K^T * scale + Mask) x V over the last two axes.
//   Q (..., Lq, d), K (..., Lk, d) or, with transpose_k, (..., d, Lk), V (..., Lk, dv) -> Y (..., Lq, dv).
//   scale 0 means 1/sqrt(d). Mask broadcasts to the scores (..., Lq, Lk): a float Mask is added,
//   a bool Mask is true where attention is allowed. causal: query i sees keys j <= i + Lk - Lq
//   (aligned at the end, so a query block at the end of a cache sees the whole past).
//
//   reference: ONNX's Transpose/MatMul/Mul/Add/Where/Softmax/MatMul reference kernels, the
//              causal mask written out as an additive -inf matrix. A fully masked row is NaN
//              there (Softmax of all -inf).
//   fast:      flash-attention style: per query tile, keys in blocks of kKeyBlock with an online
//              softmax (running max and sum, the accumulator rescaled when the max grows), so the
//              score matrix is never materialized (memory per tile: kQueryTile x (dv + kKeyBlock)).
//              Causal blocks past the diagonal are skipped. Threaded over batch x query tiles.
//              float32, Q/K/V with the same batch dims; anything else goes to the reference.
//              A fully masked row gives 0.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/fused/common.h"
#include "kernels/fused/inner_op.h"

namespace fusor::fused {
namespace {

constexpr int64_t kQueryTile = 16;
constexpr int64_t kKeyBlock = 64;

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

float scale_of(float attr, int64_t d) { return attr != 0.0f ? attr : 1.0f / std::sqrt(static_cast<float>(d)); }

class RefAttention : public Kernel {
 public:
  explicit RefAttention(const KernelInfo& info)
      : scale_(info.n().attr_float("scale", 0.0f)),
        causal_(info.n().attr_int("causal", 0) != 0),
        transpose_k_(info.n().attr_int("transpose_k", 0) != 0),
        matmul_("MatMul", 2),
        mul_("Mul", 2),
        add_("Add", 2),
        where_("Where", 3),
        softmax_("Softmax", 1, {Attribute::make_int("axis", -1)}) {}

  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& q = required_input(ctx, 0);
    const Tensor& k = required_input(ctx, 1);
    const Tensor& v = required_input(ctx, 2);
    const Tensor* mask = optional_input(ctx, 3);
    const AttnShape s = attn_shape(q.shape(), k.shape(), v.shape(), transpose_k_, ctx.where());
    const Tensor kt = transpose_k_ ? k : permuted(k, swap_last_two(k.rank()));
    Tensor scores = matmul_.run1(ctx, {&q, &kt});
    dispatch_float(scores.dtype(), ctx.where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const Tensor sc = Tensor::scalar<T>(static_cast<T>(scale_of(scale_, s.d)));
      scores = mul_.run1(ctx, {&scores, &sc});
      if (mask && mask->dtype() == DataType::Bool) {
        const Tensor ninf = Tensor::scalar<T>(-std::numeric_limits<T>::infinity());
        scores = where_.run1(ctx, {mask, &scores, &ninf});
      } else if (mask) {
        scores = add_.run1(ctx, {&scores, mask});
      }
      if (causal_) {
        Tensor c(scores.dtype(), {s.lq, s.lk});
        for (int64_t i = 0; i < s.lq; ++i)
          for (int64_t j = 0; j < s.lk; ++j)
            c.data<T>()[i * s.lk + j] = j <= i + s.lk - s.lq ? T(0) : -std::numeric_limits<T>::infinity();
        scores = add_.run1(ctx, {&scores, &c});
      }
    });
    const Tensor probs = softmax_.run1(ctx, {&scores});
    write_output(ctx, 0, matmul_.run1(ctx, {&probs, &v}));
  }

 private:
  float scale_;
  bool causal_, transpose_k_;
  InnerOp matmul_, mul_, add_, where_, softmax_;
};

inline float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) acc[l] += a[i + l] * b[i + l];
  float s = 0;
  for (; i < n; ++i) s += a[i] * b[i];
  for (int l = 0; l < 8; ++l) s += acc[l];
  return s;
}

class FastAttention : public FastFusedKernel {
 public:
  explicit FastAttention(const KernelInfo& info)
      : FastFusedKernel(info),
        scale_(info.n().attr_float("scale", 0.0f)),
        causal_(info.n().attr_int("causal", 0) != 0),
        transpose_k_(info.n().attr_int("transpose_k", 0) != 0) {}

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
    if (q.dtype() != DataType::Float || k.dtype() != DataType::Float || v.dtype() != DataType::Float ||
        k_batch != s.batch_dims || v_batch != s.batch_dims ||
        (mask && ((mask->dtype() != DataType::Float && mask->dtype() != DataType::Bool) ||
                  !broadcasts_to(mask->shape(), score_shape))))
      return fallback_->compute(ctx);
    Shape out = s.batch_dims;
    out.push_back(s.lq);
    out.push_back(s.dv);
    Tensor& y = ctx.output(0, out, DataType::Float);
    if (y.numel() == 0) return;

    // Mask addressing: per batch its base offset, and its strides along queries and keys.
    int64_t* mask_base = nullptr;
    int64_t mask_row = 0, mask_col = 0;
    if (mask) {
      const int r = static_cast<int>(score_shape.size()), mr = mask->rank();
      std::vector<int64_t> stride(r, 0);
      int64_t st = 1;
      for (int dd = mr - 1; dd >= 0; --dd) {
        const int od = dd + (r - mr);
        stride[od] = mask->dim(dd) == 1 ? 0 : st;
        st *= mask->dim(dd);
      }
      mask_row = stride[r - 2], mask_col = stride[r - 1];
      mask_base = static_cast<int64_t*>(ctx.scratch(s.batch * sizeof(int64_t)));
      for (int64_t b = 0; b < s.batch; ++b) {
        int64_t rem = b, off = 0;
        for (int dd = r - 3; dd >= 0; --dd) {
          off += (rem % score_shape[dd]) * stride[dd];
          rem /= score_shape[dd];
        }
        mask_base[b] = off;
      }
    }

    const int64_t tiles = (s.lq + kQueryTile - 1) / kQueryTile;
    const int64_t tasks = s.batch * tiles;
    const int64_t chunks = std::min<int64_t>(tasks, std::max(1, ctx.threads().num_threads()) * 4);
    const int64_t per_chunk = kQueryTile * (s.dv + 2) + kKeyBlock;
    float* scratch = static_cast<float*>(ctx.scratch(chunks * per_chunk * sizeof(float)));
    const float scale = scale_of(scale_, s.d);
    const float* pq = q.data<float>();
    const float* pk = k.data<float>();
    const float* pv = v.data<float>();
    const float* pm = mask && mask->dtype() == DataType::Float ? mask->data<float>() : nullptr;
    const bool* pmb = mask && mask->dtype() == DataType::Bool ? mask->data<bool>() : nullptr;
    float* py = y.data<float>();
    const bool causal = causal_, tk = transpose_k_;
    const float ninf = -std::numeric_limits<float>::infinity();

    ctx.threads().parallel_for(chunks, [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        float* acc = scratch + c * per_chunk;          // kQueryTile x dv
        float* mx = acc + kQueryTile * s.dv;           // kQueryTile running maxima
        float* sum = mx + kQueryTile;                  // kQueryTile running sums
        float* sc = sum + kQueryTile;                  // kKeyBlock scores
        for (int64_t t = c * tasks / chunks; t < (c + 1) * tasks / chunks; ++t) {
          const int64_t b = t / tiles, i0 = (t % tiles) * kQueryTile, i1 = std::min(s.lq, i0 + kQueryTile);
          const float* qb = pq + b * s.lq * s.d;
          const float* kb = pk + b * s.lk * s.d;
          const float* vb = pv + b * s.lk * s.dv;
          std::fill(acc, acc + kQueryTile * s.dv, 0.0f);
          std::fill(mx, mx + kQueryTile, ninf);
          std::fill(sum, sum + kQueryTile, 0.0f);
          // Keys any query of the tile can see.
          const int64_t key_end = causal ? std::clamp<int64_t>(i1 - 1 + s.lk - s.lq + 1, 0, s.lk) : s.lk;
          for (int64_t j0 = 0; j0 < key_end; j0 += kKeyBlock) {
            const int64_t jn = std::min(kKeyBlock, key_end - j0);
            for (int64_t i = i0; i < i1; ++i) {
              const int64_t limit = causal ? std::min<int64_t>(jn, i + s.lk - s.lq + 1 - j0) : jn;
              if (limit <= 0) continue;
              const float* qi = qb + i * s.d;
              if (tk) {  // K is (d, Lk): accumulate over d with the key index innermost
                std::fill(sc, sc + limit, 0.0f);
                for (int64_t e = 0; e < s.d; ++e) {
                  const float qe = qi[e];
                  const float* kr = kb + e * s.lk + j0;
                  for (int64_t j = 0; j < limit; ++j) sc[j] += qe * kr[j];
                }
                for (int64_t j = 0; j < limit; ++j) sc[j] *= scale;
              } else {
                for (int64_t j = 0; j < limit; ++j) sc[j] = dot(qi, kb + (j0 + j) * s.d, s.d) * scale;
              }
              if (pm) {
                const float* mrow = pm + mask_base[b] + i * mask_row + j0 * mask_col;
                for (int64_t j = 0; j < limit; ++j) sc[j] += mrow[j * mask_col];
              } else if (pmb) {
                const bool* mrow = pmb + mask_base[b] + i * mask_row + j0 * mask_col;
                for (int64_t j = 0; j < limit; ++j)
                  if (!mrow[j * mask_col]) sc[j] = ninf;
              }
              float block_max = ninf;
              for (int64_t j = 0; j < limit; ++j) block_max = std::max(block_max, sc[j]);
              if (block_max == ninf) continue;  // nothing visible in this block
              const int64_t r = i - i0;
              const float m_new = std::max(mx[r], block_max);
              float* ar = acc + r * s.dv;
              if (mx[r] != ninf && m_new != mx[r]) {
                const float corr = std::exp(mx[r] - m_new);
                sum[r] *= corr;
                for (int64_t e = 0; e < s.dv; ++e) ar[e] *= corr;
              }
              mx[r] = m_new;
              for (int64_t j = 0; j < limit; ++j) {
                if (sc[j] == ninf) continue;
                const float p = std::exp(sc[j] - m_new);
                sum[r] += p;
                const float* vr = vb + (j0 + j) * s.dv;
                for (int64_t e = 0; e < s.dv; ++e) ar[e] += p * vr[e];
              }
            }
          }
          for (int64_t i = i0; i < i1; ++i) {
            const int64_t r = i - i0;
            const float inv = sum[r] > 0.0f ? 1.0f / sum[r] : 0.0f;
            float* yr = py + (b * s.lq + i) * s.dv;
            for (int64_t e = 0; e < s.dv; ++e) yr[e] = acc[r * s.dv + e] * inv;
          }
        }
      }
    }, 1);
  }

 private:
  float scale_;
  bool causal_, transpose_k_;
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
