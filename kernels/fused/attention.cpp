// Attention: Y = Softmax(Q x K^T * scale + Mask) x V over the last two axes.
//   Q (..., Lq, d), K (..., Lk, d) or, with transpose_k, (..., d, Lk), V (..., Lk, dv) -> Y (..., Lq, dv).
//   scale 0 means 1/sqrt(d). Mask broadcasts to the scores (..., Lq, Lk): a float Mask is added,
//   a bool Mask is true where attention is allowed. causal: query i sees keys j <= i + Lk - Lq
//   (aligned at the end, so a query block at the end of a cache sees the whole past).
//
//   reference: ONNX's Transpose/MatMul/Mul/Add/Where/Softmax/MatMul reference kernels, the
//              causal mask written out as an additive -inf matrix. A fully masked row is NaN
//              there (Softmax of all -inf).
//   fast:      flash-attention style: per (batch, tile of query rows), keys in blocks of kKeyBlock:
//              the block's scores come from the GEMM core (scale in its epilogue), the mask is
//              added and an online softmax step turns them into probabilities with the vectorized
//              exp (attention_rows.h), rescaling the output rows when a row's max grows; then the
//              GEMM core accumulates P x V into the output rows (residual epilogue). The score
//              matrix is never materialized: memory per task is tile x kKeyBlock floats. Causal
//              blocks past the diagonal are skipped. Threaded over tasks. float32, Q/K/V with the
//              same batch dims; anything else goes to the reference. A fully masked row gives 0.
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <vector>

#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/fused/attention_rows.h"
#include "kernels/fused/common.h"
#include "kernels/fused/inner_op.h"

namespace fusor::fused {
namespace {

// Query rows per task, keys per online-softmax step (a tile x block score buffer of 32 KB). 128 x 256
// measured no better on this (shared, noisy) machine.
constexpr int64_t kQueryTile = 64;
constexpr int64_t kKeyBlock = 128;
// Work below which a chunk of tasks is not split further across threads.
constexpr int64_t kMinFlopsPerChunk = int64_t(1) << 19;

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

// Memory for the GEMM core inside a task. One gemm() call may ask several times (a large M packs
// B whole, then takes its workspace) and needs distinct blocks; the blocks stay with the thread
// and the next call reuses them (reset() before each call).
class ThreadScratch {
 public:
  ~ThreadScratch() {
    for (Block& b : blocks_) ::operator delete[](b.p, std::align_val_t(64));
  }
  void reset() { next_ = 0; }
  void* get(size_t bytes) {
    if (next_ == blocks_.size()) blocks_.push_back({});
    Block& b = blocks_[next_++];
    if (b.bytes < bytes) {
      ::operator delete[](b.p, std::align_val_t(64));
      b.bytes = (bytes + 4095) / 4096 * 4096;
      b.p = new (std::align_val_t(64)) float[b.bytes / sizeof(float)];
    }
    return b.p;
  }
  static ThreadScratch& mine() {
    thread_local ThreadScratch s;
    return s;
  }

 private:
  struct Block {
    float* p = nullptr;
    size_t bytes = 0;
  };
  std::vector<Block> blocks_;
  size_t next_ = 0;
};

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
    if (s.lk == 0) {  // no keys: every row is fully masked
      std::fill(y.data<float>(), y.data<float>() + y.numel(), 0.0f);
      return;
    }

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

    // Tasks: (batch, query tile). Small problems use shorter tiles so both threads get work.
    const int threads = std::max(1, ctx.threads().num_threads());
    int64_t tile = kQueryTile;
    while (tile > 8 && s.batch * ((s.lq + tile - 1) / tile) < 2 * threads) tile /= 2;
    const int64_t tiles = (s.lq + tile - 1) / tile;
    const int64_t tasks = s.batch * tiles;
    // Tasks per chunk: small problems stay on one thread (a wake-up costs more than their work).
    const int64_t task_flops = 2 * tile * s.lk * (s.d + s.dv);
    const int64_t grain = std::max<int64_t>(1, kMinFlopsPerChunk / std::max<int64_t>(1, task_flops));
    const int64_t kb = std::min(kKeyBlock, s.lk);
    const int64_t per_task = tile * kb + 2 * tile;  // scores, running max, running sum
    float* scratch = static_cast<float*>(ctx.scratch(static_cast<size_t>(tasks) * per_task * sizeof(float)));
    const float scale = scale_of(scale_, s.d);
    const float* pq = q.data<float>();
    const float* pk = k.data<float>();
    const float* pv = v.data<float>();
    const float* pm = mask && mask->dtype() == DataType::Float ? mask->data<float>() : nullptr;
    const bool* pmb = mask && mask->dtype() == DataType::Bool ? mask->data<bool>() : nullptr;
    float* py = y.data<float>();
    const bool causal = causal_, tk = transpose_k_;
    const float ninf = -std::numeric_limits<float>::infinity();
    const Isa isa = active_isa();
    const attn::RowOps& ops = attn::row_ops(isa);
    GemmRun run;
    run.scratch = [](size_t bytes) { return ThreadScratch::mine().get(bytes); };
    run.isa = isa;

    ctx.threads().parallel_for(tasks, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        float* sc = scratch + t * per_task;  // tile x kb scores, then probabilities
        float* mx = sc + tile * kb;
        float* sum = mx + tile;
        const int64_t b = t / tiles, i0 = (t % tiles) * tile, tq = std::min(s.lq, i0 + tile) - i0;
        const float* qb = pq + (b * s.lq + i0) * s.d;
        const float* kbase = pk + b * s.lk * s.d;
        const float* vb = pv + b * s.lk * s.dv;
        float* yb = py + (b * s.lq + i0) * s.dv;  // the output rows accumulate P x V directly
        std::fill(yb, yb + tq * s.dv, 0.0f);
        std::fill(mx, mx + tq, ninf);
        std::fill(sum, sum + tq, 0.0f);
        // Keys the tile's last query can see (causal: query i sees keys j <= i + lk - lq).
        const int64_t key_end = causal ? std::clamp<int64_t>(i0 + tq + s.lk - s.lq, 0, s.lk) : s.lk;
        for (int64_t j0 = 0; j0 < key_end; j0 += kb) {
          const int64_t jn = std::min(kb, key_end - j0);
          // Scores: scale * Q_tile x K_block^T (K rows are keys, or with transpose_k its columns).
          const MatrixRef kref = tk ? MatrixRef{kbase + j0, s.lk, false} : MatrixRef{kbase + j0 * s.d, s.d, true};
          Epilogue ep;
          ep.scale = scale;
          ThreadScratch::mine().reset();
          gemm(tq, jn, s.d, MatrixRef{qb, s.d, false}, kref, sc, kb, ep, run);
          for (int64_t r = 0; r < tq; ++r) {
            float* row = sc + r * kb;
            const int64_t i = i0 + r;
            const int64_t visible = causal ? std::clamp<int64_t>(i + s.lk - s.lq + 1 - j0, 0, jn) : jn;
            if (pm) {
              const float* mrow = pm + mask_base[b] + i * mask_row + j0 * mask_col;
              if (mask_col == 1) ops.add(row, mrow, visible);
              else
                for (int64_t j = 0; j < visible; ++j) row[j] += mrow[j * mask_col];
            } else if (pmb) {
              const bool* mrow = pmb + mask_base[b] + i * mask_row + j0 * mask_col;
              for (int64_t j = 0; j < visible; ++j)
                if (!mrow[j * mask_col]) row[j] = ninf;
            }
            for (int64_t j = visible; j < jn; ++j) row[j] = ninf;
            const float corr = ops.softmax_step(row, jn, mx[r], sum[r]);
            if (corr != 1.0f) ops.scale(yb + r * s.dv, s.dv, corr);
          }
          // Y_tile += P x V_block (the residual epilogue reads each element before writing it).
          Epilogue acc;
          acc.residual = yb;
          acc.residual_ld = s.dv;
          ThreadScratch::mine().reset();
          gemm(tq, s.dv, jn, MatrixRef{sc, kb, false}, MatrixRef{vb + j0 * s.dv, s.dv, false}, yb, s.dv, acc, run);
        }
        for (int64_t r = 0; r < tq; ++r)  // a row that saw no key (fully masked) stays 0
          ops.scale(yb + r * s.dv, s.dv, sum[r] > 0.0f ? 1.0f / sum[r] : 0.0f);
      }
    }, grain);
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
