// fusor.MultiHeadAttention and fusor.PackedAttention: attention over heads kept in the layout of
// the projections that produce them, so no head split or merge is ever materialized.
//   MultiHeadAttention(Q, K, V, Mask?): Q (B, Sq, H * d), K (B, Sk, H * d), V (B, Sk, H * dv)
//     -> Y (B, Sq, H * dv); head h is columns [h * d, (h + 1) * d); d is the head_size attribute
//     (H = Q's last axis / d, dv = V's last axis / H). seq_first: the first two axes
//     are swapped in every operand (S, B, H * d), as sequence-first exports have them.
//   PackedAttention(QKV, Mask?): QKV (B, S, 3 * H * d) holds Q, K and V side by side along its
//     last axis (a fused QKV projection's output) -> Y (B, S, H * d); same seq_first.
//   Mask broadcasts to the scores (B, H, Sq, Sk): float is added, bool is true where allowed.
//   scale 0 means 1/sqrt(d); causal: query i sees keys j <= i + Sk - Sq.
//
//   reference: heads split out (Reshape + Transpose), AttentionReference, heads merged back.
//   fast:      the flash-attention core (flash_attention.h) reading every operand through strides;
//              a constant causal mask runs as causal. float32 only; otherwise the reference.
#include <cstring>
#include <utility>
#include <vector>

#include "kernels/common/broadcast.h"
#include "kernels/common/float16_widening.h"
#include "kernels/fused/attention_common.h"
#include "kernels/fused/common.h"
#include "kernels/fused/flash_attention.h"

namespace fusor::fused {
namespace {

// Sizes of one call, after checking the operands against each other.
struct MhaShape {
  int64_t b = 0, sq = 0, sk = 0, heads = 0, d = 0, dv = 0;
};

std::string dims(const Tensor& t) { return shape_str(t.shape()); }

MhaShape mha_shape(const Tensor& q, const Tensor* k, const Tensor* v, int64_t head_size, bool seq_first,
                   const std::string& where) {
  const int bax = seq_first ? 1 : 0, sax = 1 - bax;
  MhaShape s;
  s.d = head_size;
  if (head_size <= 0) throw_bad_input(where + ": head_size must be positive, got " + std::to_string(head_size));
  const bool packed = k == nullptr;
  if (q.rank() != 3) throw_bad_input(where + ": " + (packed ? "QKV" : "Q") + " must have rank 3, got " + dims(q));
  s.b = q.dim(bax);
  s.sq = q.dim(sax);
  const int64_t qw = q.dim(2), part = packed ? 3 * head_size : head_size;
  if (qw % part != 0 || qw == 0)
    throw_bad_input(where + ": " + (packed ? "QKV" : "Q") + "'s last axis (" + std::to_string(qw) +
                    ") is not a positive multiple of " + (packed ? "3 x head_size" : "head_size") + " (" +
                    std::to_string(part) + ")");
  s.heads = qw / part;
  if (packed) {
    s.sk = s.sq;
    s.dv = s.d;
    return s;
  }
  if (k->rank() != 3 || v->rank() != 3)
    throw_bad_input(where + ": K and V must have rank 3, got " + dims(*k) + " and " + dims(*v));
  s.sk = k->dim(sax);
  if (k->dim(bax) != s.b || v->dim(bax) != s.b || v->dim(sax) != s.sk || k->dim(2) != qw || v->dim(2) % s.heads != 0)
    throw_bad_input(where + ": Q " + dims(q) + ", K " + dims(*k) + " and V " + dims(*v) + " do not fit " +
                    std::to_string(s.heads) + " heads of size " + std::to_string(head_size) +
                    (seq_first ? " (sequence first)" : ""));
  s.dv = v->dim(2) / s.heads;
  return s;
}

// (B, S, H * w) or (S, B, H * w) -> (B, H, S, w), and back.
Tensor split_heads(const Tensor& x, int64_t heads, bool seq_first) {
  const Tensor r = x.reshaped({x.dim(0), x.dim(1), heads, x.dim(2) / heads});
  return permuted(r, seq_first ? std::vector<int64_t>{1, 2, 0, 3} : std::vector<int64_t>{0, 2, 1, 3});
}

Tensor merge_heads(const Tensor& y, bool seq_first) {
  const Tensor t = permuted(y, seq_first ? std::vector<int64_t>{2, 0, 1, 3} : std::vector<int64_t>{0, 2, 1, 3});
  return t.reshaped({t.dim(0), t.dim(1), t.dim(2) * t.dim(3)});
}

// Columns [part * w, (part + 1) * w) of the last axis of a rank-3 tensor.
Tensor column_part(const Tensor& x, int part, int64_t w) {
  Tensor out(x.dtype(), {x.dim(0), x.dim(1), w});
  const size_t es = dtype_size(x.dtype());
  const int64_t rows = x.dim(0) * x.dim(1);
  const char* src = static_cast<const char*>(x.raw());
  char* dst = static_cast<char*>(out.raw());
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst + r * w * es, src + (r * x.dim(2) + part * w) * es, static_cast<size_t>(w) * es);
  return out;
}

class RefMultiHeadAttention : public Kernel {
 public:
  RefMultiHeadAttention(const KernelInfo& info, bool packed)
      : packed_(packed),
        head_size_(info.n().attr_int("head_size", 0)),
        scale_(info.n().attr_float("scale", 0.0f)),
        causal_(info.n().attr_int("causal", 0) != 0),
        seq_first_(info.n().attr_int("seq_first", 0) != 0) {}

  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const Tensor* mask = optional_input(ctx, packed_ ? 1 : 3);
    Tensor q = x, k, v;
    MhaShape s;
    if (packed_) {
      s = mha_shape(x, nullptr, nullptr, head_size_, seq_first_, ctx.where());
      q = column_part(x, 0, s.heads * s.d);
      k = column_part(x, 1, s.heads * s.d);
      v = column_part(x, 2, s.heads * s.d);
    } else {
      k = required_input(ctx, 1);
      v = required_input(ctx, 2);
      s = mha_shape(q, &k, &v, head_size_, seq_first_, ctx.where());
    }
    const Tensor y = ref_.run(ctx, split_heads(q, s.heads, seq_first_), split_heads(k, s.heads, seq_first_),
                              split_heads(v, s.heads, seq_first_), mask, scale_, causal_, false);
    write_output(ctx, 0, merge_heads(y, seq_first_));
  }

 private:
  bool packed_;
  int64_t head_size_;
  float scale_;
  bool causal_, seq_first_;
  AttentionReference ref_;
};

class FastMultiHeadAttention : public FastFusedKernel {
 public:
  FastMultiHeadAttention(const KernelInfo& info, bool packed)
      : FastFusedKernel(info),
        packed_(packed),
        head_size_(info.n().attr_int("head_size", 0)),
        scale_(info.n().attr_float("scale", 0.0f)),
        causal_(info.n().attr_int("causal", 0) != 0),
        seq_first_(info.n().attr_int("seq_first", 0) != 0) {
    const size_t mi = packed ? 1 : 3;
    const TensorPtr m = info.const_inputs.size() > mi ? info.const_inputs[mi] : nullptr;
    if (m && is_causal_mask(*m)) causal_mask_shape_ = m->shape();
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor* k = packed_ ? nullptr : &required_input(ctx, 1);
    const Tensor* v = packed_ ? nullptr : &required_input(ctx, 2);
    const Tensor* mask = optional_input(ctx, packed_ ? 1 : 3);
    const MhaShape s = mha_shape(x, k, v, head_size_, seq_first_, where_);
    const Shape scores{s.b, s.heads, s.sq, s.sk};
    AttnMask am;
    if (x.dtype() != DataType::Float || (k && k->dtype() != DataType::Float) || (v && v->dtype() != DataType::Float) ||
        !am.bind(mask, scores, causal_, causal_mask_shape_))
      return fallback_->compute(ctx);
    const int64_t hd = s.heads * s.d, hdv = s.heads * s.dv;
    Tensor& y = ctx.output(0, seq_first_ ? Shape{s.sq, s.b, hdv} : Shape{s.b, s.sq, hdv}, DataType::Float);
    if (y.numel() == 0) return;

    // An operand of `width` floats per (batch, position): (batch stride, row stride).
    auto strides = [&](int64_t width, int64_t len) {
      return seq_first_ ? std::pair<int64_t, int64_t>{width, s.b * width} : std::pair<int64_t, int64_t>{len * width, width};
    };
    AttnProblem p;
    p.batch = s.b, p.heads = s.heads;
    p.sq = s.sq, p.sk = s.sk, p.d = s.d, p.dv = s.dv;
    const float* px = x.data<float>();
    const float* pk = packed_ ? px + hd : k->data<float>();
    const float* pv = packed_ ? px + 2 * hd : v->data<float>();
    const auto [qb, qr] = strides(x.dim(2), s.sq);
    const auto [kb, kr] = strides(packed_ ? x.dim(2) : hd, s.sk);
    const auto [vb, vr] = strides(packed_ ? x.dim(2) : hdv, s.sk);
    const auto [yb, yr] = strides(hdv, s.sq);
    p.q = {px, qb, s.d, qr};
    p.k = pk, p.k_batch = kb, p.k_head = s.d, p.k_key = kr, p.k_dim = 1;
    p.v = {pv, vb, s.dv, vr};
    p.y = y.data<float>(), p.y_batch = yb, p.y_head = s.dv, p.y_row = yr;
    run_flash_attention(p, am, scale_, ctx);
  }

 private:
  bool packed_;
  int64_t head_size_;
  float scale_;
  bool causal_, seq_first_;
  Shape causal_mask_shape_;
};

void add_mha(KernelRegistry& r, const char* op, bool packed) {
  r.add(kFusorDomain, op, "reference", 0, [packed](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    return std::make_unique<RefMultiHeadAttention>(info, packed);
  });
  r.add(kFusorDomain, op, "fast", kFastPriority, [packed](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    if (known_not_float(info, 0)) return make_reference(info);
    return std::make_unique<FastMultiHeadAttention>(info, packed);
  });
}

}  // namespace

void register_fused_multi_head_attention_kernels(KernelRegistry& r) {
  add_mha(r, "MultiHeadAttention", false);
  add_mha(r, "PackedAttention", true);
}

}  // namespace fusor::fused
