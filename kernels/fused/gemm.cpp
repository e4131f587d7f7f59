// FusedGemm (Gemm + activation) and FusedMatMul (alpha * op(A) x op(B) + Bias, then an
// activation; op transposes the last two axes).
//   reference: ONNX's Gemm, or Transpose/MatMul/Mul/Add reference kernels, then the activation.
//   fast:      the GEMM core with alpha as the epilogue's scale, C / Bias as its bias or residual
//              and the activation in the epilogue; transposes are read by the packing, never
//              materialized; constant 2-D B packed once (float32; anything else falls back).
#include <algorithm>

#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/common/matmul_shape.h"
#include "kernels/fused/activation.h"
#include "kernels/fused/common.h"
#include "kernels/fused/inner_op.h"

namespace fusor::fused {
namespace {

class RefFusedGemm : public Kernel {
 public:
  explicit RefFusedGemm(const KernelInfo& info)
      : act_(activation_of(info.n())), gemm_("Gemm", 3, attrs_without_activation(info.n())) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    Tensor y = gemm_.run1(ctx, {&required_input(ctx, 0), &required_input(ctx, 1), optional_input(ctx, 2)});
    activate_in_place(y, act_, ctx.where());
    write_output(ctx, 0, y);
  }

 private:
  ActivationSpec act_;
  InnerOp gemm_;
};

class RefFusedMatMul : public Kernel {
 public:
  explicit RefFusedMatMul(const KernelInfo& info)
      : act_(activation_of(info.n())),
        trans_a_(info.n().attr_int("transA", 0) != 0),
        trans_b_(info.n().attr_int("transB", 0) != 0),
        alpha_(info.n().attr_float("alpha", 1.0f)),
        matmul_("MatMul", 2),
        mul_("Mul", 2),
        add_("Add", 2) {}

  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& a_in = required_input(ctx, 0);
    const Tensor& b_in = required_input(ctx, 1);
    const Tensor* bias = optional_input(ctx, 2);
    const Tensor a = trans_a_ && a_in.rank() >= 2 ? permuted(a_in, swap_last_two(a_in.rank())) : a_in;
    const Tensor b = trans_b_ && b_in.rank() >= 2 ? permuted(b_in, swap_last_two(b_in.rank())) : b_in;
    Tensor y = matmul_.run1(ctx, {&a, &b});
    if (alpha_ != 1.0f) {
      const Tensor s = dispatch_float(y.dtype(), ctx.where(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        return Tensor::scalar<T>(static_cast<T>(alpha_));
      });
      y = mul_.run1(ctx, {&y, &s});
    }
    if (bias) {
      if (!broadcasts_to(bias->shape(), y.shape()))
        throw_bad_input(ctx.where() + ": Bias of shape " + shape_str(bias->shape()) + " does not broadcast to " +
                        shape_str(y.shape()));
      y = add_.run1(ctx, {&y, bias});
    }
    activate_in_place(y, act_, ctx.where());
    write_output(ctx, 0, y);
  }

 private:
  ActivationSpec act_;
  bool trans_a_, trans_b_;
  float alpha_;
  InnerOp matmul_, mul_, add_;
};

// Y = act(alpha op(A) op(B) + beta C).
class FastFusedGemm : public FastFusedKernel {
 public:
  explicit FastFusedGemm(const KernelInfo& info)
      : FastFusedKernel(info),
        act_(activation_of(info.n())),
        trans_a_(info.n().attr_int("transA", 0) != 0),
        trans_b_(info.n().attr_int("transB", 0) != 0),
        alpha_(info.n().attr_float("alpha", 1.0f)),
        beta_(info.n().attr_float("beta", 1.0f)) {
    packed_b_ = pack_constant_b(info, trans_b_);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const Tensor* c = optional_input(ctx, 2);
    if (a.dtype() != DataType::Float || b.dtype() != DataType::Float || (c && c->dtype() != DataType::Float) ||
        a.rank() != 2 || b.rank() != 2 || (c && c->rank() > 2))
      return fallback_->compute(ctx);
    const int64_t M = trans_a_ ? a.dim(1) : a.dim(0), K = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t N = trans_b_ ? b.dim(0) : b.dim(1), Kb = trans_b_ ? b.dim(1) : b.dim(0);
    if (K != Kb)
      throw_bad_input(where_ + ": inner dimensions differ: A " + shape_str(a.shape()) + ", B " + shape_str(b.shape()));
    const Shape out{M, N};
    if (c && !broadcasts_to(c->shape(), out))
      throw_bad_input(where_ + ": C of shape " + shape_str(c->shape()) + " does not broadcast to " + shape_str(out));
    Tensor& y = ctx.output(0, out, DataType::Float);
    Epilogue ep;
    ep.scale = alpha_;
    ep.act = act_;
    if (c && beta_ != 0.0f) {
      const int64_t rows = c->rank() == 2 ? c->dim(0) : 1, cols = c->rank() >= 1 ? c->dim(-1) : 1;
      // beta C, scaled once into scratch unless beta is 1.
      const float* cv = c->data<float>();
      if (beta_ != 1.0f) {
        float* t = static_cast<float*>(ctx.scratch(c->numel() * sizeof(float)));
        for (int64_t i = 0; i < c->numel(); ++i) t[i] = beta_ * cv[i];
        cv = t;
      }
      if (rows == M && cols == N && M > 1) {
        ep.residual = cv, ep.residual_ld = N;
      } else if (cols == N && N > 1) {
        ep.bias = cv, ep.bias_axis = BiasAxis::PerColumn;
      } else if (rows == M && M > 1) {
        ep.bias = cv, ep.bias_axis = BiasAxis::PerRow;
      } else {  // one value (or M = N = 1)
        float* t = static_cast<float*>(ctx.scratch(std::max<int64_t>(N, 1) * sizeof(float)));
        std::fill(t, t + N, cv[0]);
        ep.bias = t, ep.bias_axis = BiasAxis::PerColumn;
      }
    }
    const MatrixRef A{a.data<float>(), a.dim(1), trans_a_};
    if (!packed_b_.empty() && packed_b_.rows() == K && packed_b_.cols() == N)
      gemm(M, A, packed_b_, y.data<float>(), N, ep, gemm_run(ctx));
    else
      gemm(M, N, K, A, MatrixRef{b.data<float>(), b.dim(1), trans_b_}, y.data<float>(), N, ep, gemm_run(ctx));
  }

 private:
  ActivationSpec act_;
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  PackedB packed_b_;

 public:
  Bytes weights() const override { return {packed_b_.data(), packed_b_.bytes()}; }
};

// op(X)'s shape: the last two axes swapped when `trans` (rank >= 2).
Shape op_shape(const Shape& s, bool trans) {
  Shape out = s;
  if (trans && out.size() >= 2) std::swap(out[out.size() - 1], out[out.size() - 2]);
  return out;
}

class FastFusedMatMul : public FastFusedKernel {
 public:
  explicit FastFusedMatMul(const KernelInfo& info)
      : FastFusedKernel(info),
        act_(activation_of(info.n())),
        trans_a_(info.n().attr_int("transA", 0) != 0),
        trans_b_(info.n().attr_int("transB", 0) != 0),
        alpha_(info.n().attr_float("alpha", 1.0f)) {
    packed_b_ = pack_constant_b(info, trans_b_);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const Tensor* bias = optional_input(ctx, 2);
    if (a.dtype() != DataType::Float || b.dtype() != DataType::Float || (bias && bias->dtype() != DataType::Float))
      return fallback_->compute(ctx);
    const bool ta = trans_a_ && a.rank() >= 2, tb = trans_b_ && b.rank() >= 2;
    const MatMulShape s = matmul_shape(op_shape(a.shape(), ta), op_shape(b.shape(), tb), where_);
    // Bias along the last axis only (N values); other broadcasts go to the reference.
    if (bias && (bias->numel() != s.N || (bias->rank() > 0 && bias->dim(-1) != s.N) || !broadcasts_to(bias->shape(), s.out)))
      return fallback_->compute(ctx);
    Tensor& y = ctx.output(0, s.out, DataType::Float);
    Epilogue ep;
    ep.scale = alpha_;
    ep.act = act_;
    if (bias) ep.bias = bias->data<float>(), ep.bias_axis = BiasAxis::PerColumn;
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* py = y.data<float>();
    const GemmRun run = gemm_run(ctx);
    const int64_t lda = ta ? s.M : s.K, ldb = tb ? s.K : s.N;
    const int64_t batches = s.batch_count();
    const bool b_shared = shape_numel(s.b_batch) == 1, a_full = shape_numel(s.a_batch) == batches;
    const bool use_packed = !packed_b_.empty() && b_shared && packed_b_.rows() == s.K && packed_b_.cols() == s.N;
    if (use_packed && a_full && !ta) {  // A's matrices are consecutive rows against one B: one GEMM
      gemm(batches * s.M, MatrixRef{pa, s.K}, packed_b_, py, s.N, ep, run);
      return;
    }
    for_each_gemm(batches, 2.0 * static_cast<double>(s.M * s.N * s.K), run, [&](int64_t i, const GemmRun& r) {
      const MatrixRef A{pa + s.a_matrix(i) * s.M * s.K, lda, ta};
      float* yi = py + i * s.M * s.N;
      if (use_packed)
        gemm(s.M, A, packed_b_, yi, s.N, ep, r);
      else
        gemm(s.M, s.N, s.K, A, MatrixRef{pb + s.b_matrix(i) * s.K * s.N, ldb, tb}, yi, s.N, ep, r);
    });
  }

 private:
  ActivationSpec act_;
  bool trans_a_, trans_b_;
  float alpha_;
  PackedB packed_b_;

 public:
  Bytes weights() const override { return {packed_b_.data(), packed_b_.bytes()}; }
};

template <class Fast>
void add_fast(KernelRegistry& r, const char* op) {
  r.add(kFusorDomain, op, "fast", kFastPriority, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    if (known_not_float(info, 0)) return make_reference(info);
    return std::make_unique<Fast>(info);
  });
}

}  // namespace

void register_fused_gemm_kernels(KernelRegistry& r) {
  add_fused_kernel<RefFusedGemm>(r, "FusedGemm", "reference", 0);
  add_fused_kernel<RefFusedMatMul>(r, "FusedMatMul", "reference", 0);
  add_fast<FastFusedGemm>(r, "FusedGemm");
  add_fast<FastFusedMatMul>(r, "FusedMatMul");
}

}  // namespace fusor::fused
