// The "fast" (priority 10) ONNX MatMul, Gemm and Conv kernels on the GEMM core and conv paths.
// Float32 only: for any other element type, or a case these paths do not cover (3-D conv), the
// kernel hands the call to the registry's "reference" kernel, created alongside.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "kernels/common/broadcast.h"
#include "kernels/common/conv_params.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/common/matmul_shape.h"
#include "kernels/conv/conv.h"
#include "kernels/gemm/gemm.h"
#include "kernels/kernel.h"
#include "kernels/register.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

class FastMatMul : public FastKernel {
 public:
  explicit FastMatMul(const KernelInfo& info) : FastKernel(info) {
    packed_b_ = pack_constant_b(info, false);  // a constant 2-D B (a weight) is packed once
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    if (a.dtype() != DataType::Float || b.dtype() != DataType::Float) return fallback_->compute(ctx);
    const MatMulShape s = matmul_shape(a.shape(), b.shape(), where_);
    Tensor& y = ctx.output(0, s.out, DataType::Float);
    const float* pa = a.data<float>();
    const float* pb = b.data<float>();
    float* py = y.data<float>();
    const GemmRun run = gemm_run(ctx);
    const int64_t batches = s.batch_count();
    const bool b_shared = shape_numel(s.b_batch) == 1, a_full = shape_numel(s.a_batch) == batches;
    if (!packed_b_.empty() && b_shared && a_full && packed_b_.rows() == s.K && packed_b_.cols() == s.N) {
      // All of A's matrices are consecutive rows against one B: a single GEMM.
      gemm(batches * s.M, MatrixRef{pa, s.K}, packed_b_, py, s.N, {}, run);
      return;
    }
    for_each_gemm(batches, 2.0 * static_cast<double>(s.M * s.N * s.K), run, [&](int64_t i, const GemmRun& r) {
      gemm(s.M, s.N, s.K, MatrixRef{pa + s.a_matrix(i) * s.M * s.K, s.K}, MatrixRef{pb + s.b_matrix(i) * s.K * s.N, s.N},
           py + i * s.M * s.N, s.N, {}, r);
    });
  }

 private:
  PackedB packed_b_;

 public:
  Bytes weights() const override { return {packed_b_.data(), packed_b_.bytes()}; }
};

// Y = alpha op(A) op(B) + beta C: alpha is the epilogue's scale; C becomes a per-column or
// per-row bias, or a residual, scaled by beta (once, at creation, when C is constant).
class FastGemm : public FastKernel {
 public:
  explicit FastGemm(const KernelInfo& info)
      : FastKernel(info),
        trans_a_(info.n().attr_int("transA", 0) != 0),
        trans_b_(info.n().attr_int("transB", 0) != 0),
        alpha_(info.n().attr_float("alpha", 1.0f)),
        beta_(info.n().attr_float("beta", 1.0f)) {
    packed_b_ = pack_constant_b(info, trans_b_);
    if (const Tensor* c = const_float(info, 2)) {
      scaled_c_ = info.prepacked("c.scaled", static_cast<size_t>(c->numel()) * sizeof(float), [&](void* dst) {
        float* d = static_cast<float*>(dst);
        for (int64_t i = 0; i < c->numel(); ++i) d[i] = beta_ * c->data<float>()[i];
      });
      has_const_c_ = true;
    }
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const Tensor* c = optional_input(ctx, 2);
    if (a.dtype() != DataType::Float || b.dtype() != DataType::Float || (c && c->dtype() != DataType::Float) ||
        a.rank() != 2 || b.rank() != 2)
      return fallback_->compute(ctx);
    const int64_t M = trans_a_ ? a.dim(1) : a.dim(0), K = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t N = trans_b_ ? b.dim(0) : b.dim(1), Kb = trans_b_ ? b.dim(1) : b.dim(0);
    if (K != Kb)
      throw_bad_input(where_ + ": inner dimensions differ: A " + shape_str(a.shape()) + (trans_a_ ? " (transposed)" : "") +
                      ", B " + shape_str(b.shape()) + (trans_b_ ? " (transposed)" : ""));
    const Shape out{M, N};
    if (c && !broadcasts_to(c->shape(), out))
      throw_bad_input(where_ + ": C of shape " + shape_str(c->shape()) + " does not broadcast to " + shape_str(out));
    Tensor& y = ctx.output(0, out, DataType::Float);
    float* py = y.data<float>();
    Epilogue ep;
    ep.scale = alpha_;
    if (c && beta_ != 0.0f) {
      const float* cv = c->data<float>();
      if (has_const_c_) {
        cv = scaled_c_.as<float>();
      } else if (beta_ != 1.0f) {
        float* t = static_cast<float*>(ctx.scratch(c->numel() * sizeof(float)));
        for (int64_t i = 0; i < c->numel(); ++i) t[i] = beta_ * c->data<float>()[i];
        cv = t;
      }
      const Shape& cs = c->shape();
      const int64_t rows = cs.size() == 2 ? cs[0] : 1, cols = cs.empty() ? 1 : cs.back();
      if (rows == M && cols == N && M > 1) {
        ep.residual = cv, ep.residual_ld = N;
      } else if (cols == N && N > 1) {
        ep.bias = cv, ep.bias_axis = BiasAxis::PerColumn;
      } else if (rows == M && M > 1) {
        ep.bias = cv, ep.bias_axis = BiasAxis::PerRow;
      } else {  // one value (or M = N = 1)
        float* t = static_cast<float*>(ctx.scratch(N * sizeof(float)));
        std::fill(t, t + N, cv[0]);
        ep.bias = t, ep.bias_axis = BiasAxis::PerColumn;
      }
    }
    const GemmRun run = gemm_run(ctx);
    const MatrixRef A{a.data<float>(), a.dim(1), trans_a_};
    if (!packed_b_.empty() && packed_b_.rows() == K && packed_b_.cols() == N)
      gemm(M, A, packed_b_, py, N, ep, run);
    else
      gemm(M, N, K, A, MatrixRef{b.data<float>(), b.dim(1), trans_b_}, py, N, ep, run);
  }

 private:
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  PackedB packed_b_;
  PrepackedBuffer scaled_c_;  // beta * C for a constant C
  bool has_const_c_ = false;

 public:
  Bytes weights() const override { return {packed_b_.data(), packed_b_.bytes()}; }
};

class FastConv : public FastKernel {
 public:
  explicit FastConv(const KernelInfo& info)
      : FastKernel(info), attrs_(WindowAttrs::parse(info.n(), WindowKind::Conv)) {
    if (const Tensor* w = const_float(info, 1); w && (w->rank() == 3 || w->rank() == 4) && attrs_.group > 0 &&
                                                w->dim(0) % attrs_.group == 0)
      weights_ = pack_conv_weights(w->data<float>(), w->shape(), attrs_.group, ConvLayout::NCHW, info.prepack);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& w = required_input(ctx, 1);
    const Tensor* b = optional_input(ctx, 2);
    if (x.dtype() != DataType::Float || w.dtype() != DataType::Float || (b && b->dtype() != DataType::Float) ||
        (x.rank() != 3 && x.rank() != 4))
      return fallback_->compute(ctx);
    const ConvParams p = conv_params(attrs_, x.shape(), w.shape());
    if (b && (b->rank() != 1 || b->dim(0) != p.out_channels))
      throw_bad_input(where_ + ": bias B has shape " + shape_str(b->shape()) + ", expected " +
                      std::to_string(p.out_channels));
    Tensor& y = ctx.output(0, p.output_shape(), DataType::Float);
    std::optional<PackedConvWeights> local;
    const PackedConvWeights* pw = weights_ ? &*weights_ : nullptr;
    if (!pw) pw = &local.emplace(pack_conv_weights(w.data<float>(), w.shape(), attrs_.group, ConvLayout::NCHW));
    Epilogue ep;
    ep.bias = b ? b->data<float>() : nullptr;
    conv2d(*pw, conv2d_shape(p), x.data<float>(), y.data<float>(), ep, gemm_run(ctx));
  }

 private:
  WindowAttrs attrs_;
  std::optional<PackedConvWeights> weights_;
};

}  // namespace

void register_fast_kernels(KernelRegistry& r) {
  add_fast_kernel<FastMatMul>(r, "", "MatMul");
  add_fast_kernel<FastGemm>(r, "", "Gemm");
  add_fast_kernel<FastConv>(r, "", "Conv");
}

}  // namespace fusor
