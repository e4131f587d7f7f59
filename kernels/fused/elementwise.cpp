// Gelu, BiasGelu, QuickGelu and Silu.
//   reference: the formulas as scalar loops in the input's precision (BiasGelu: ONNX's Add
//              reference kernel first).
//   fast:      one pass over the data in L1-sized chunks: copy, then the GEMM core's vectorized
//              epilogue in place (exact Gelu, SiLU, bias per column for BiasGelu, scale for
//              QuickGelu's alpha; the tanh form of Gelu as the GeluTanh activation).
//              Threaded over chunks. float32; anything else goes to the reference.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/common/broadcast.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/fused/common.h"
#include "kernels/fused/inner_op.h"

namespace fusor::fused {
namespace {

enum class Op { Gelu, BiasGelu, QuickGelu, Silu };

bool tanh_form(const Node& n, const std::string& where) {
  const std::string a = n.attr_string("approximate", "none");
  if (a != "none" && a != "tanh") throw_bad_input(where + ": approximate must be \"none\" or \"tanh\", got \"" + a + "\"");
  return a == "tanh";
}

template <typename T>
T gelu(T x, bool tanh_approx) {
  if (tanh_approx) {
    const T k = std::sqrt(T(2) / T(3.14159265358979323846));
    return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
  }
  return T(0.5) * x * (T(1) + std::erf(x / std::sqrt(T(2))));
}

template <typename T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

template <Op kOp>
class RefElementwise : public Kernel {
 public:
  explicit RefElementwise(const KernelInfo& info)
      : tanh_(kOp == Op::Gelu || kOp == Op::BiasGelu ? tanh_form(info.n(), info.where()) : false),
        alpha_(info.n().attr_float("alpha", 1.702f)),
        add_("Add", 2) {}

  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    Tensor x = required_input(ctx, 0);
    if constexpr (kOp == Op::BiasGelu) {
      const Tensor& bias = required_input(ctx, 1);
      if (!broadcasts_to(bias.shape(), x.shape()))
        throw_bad_input(ctx.where() + ": Bias of shape " + shape_str(bias.shape()) + " does not broadcast to X " +
                        shape_str(x.shape()));
      x = add_.run1(ctx, {&x, &bias});
    }
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    dispatch_float(x.dtype(), ctx.where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const T v = px[i];
        if constexpr (kOp == Op::Gelu || kOp == Op::BiasGelu) py[i] = gelu<T>(v, tanh_);
        if constexpr (kOp == Op::QuickGelu) py[i] = v * sigmoid<T>(T(alpha_) * v);
        if constexpr (kOp == Op::Silu) py[i] = v * sigmoid<T>(v);
      }
    });
  }

 private:
  bool tanh_;
  float alpha_;
  InnerOp add_;
};

template <Op kOp>
class FastElementwise : public FastFusedKernel {
 public:
  explicit FastElementwise(const KernelInfo& info)
      : FastFusedKernel(info),
        tanh_(kOp == Op::Gelu || kOp == Op::BiasGelu ? tanh_form(info.n(), info.where()) : false),
        alpha_(info.n().attr_float("alpha", 1.702f)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor* bias = kOp == Op::BiasGelu ? &required_input(ctx, 1) : nullptr;
    if (x.dtype() != DataType::Float || (bias && bias->dtype() != DataType::Float)) return fallback_->compute(ctx);
    // BiasGelu: a bias along the last axis only (other broadcasts: the reference).
    const int64_t cols = x.rank() ? x.dim(-1) : 1;
    if (bias && (bias->numel() != cols || !broadcasts_to(bias->shape(), x.shape()) || cols == 0))
      return fallback_->compute(ctx);
    if constexpr (kOp == Op::QuickGelu)
      if (alpha_ == 0.0f) return fallback_->compute(ctx);
    Tensor& y = ctx.output(0, x.shape(), DataType::Float);
    const int64_t n = x.numel();
    const float* px = x.data<float>();
    float* py = y.data<float>();
    Epilogue ep;
    if constexpr (kOp == Op::Gelu || kOp == Op::BiasGelu)
      ep.act = ActivationSpec::of(tanh_ ? Activation::GeluTanh : Activation::Gelu);
    if constexpr (kOp == Op::Silu) ep.act = ActivationSpec::of(Activation::SiLU);
    if constexpr (kOp == Op::QuickGelu) ep.act = ActivationSpec::of(Activation::SiLU), ep.scale = alpha_;
    if (bias) ep.bias = bias->data<float>(), ep.bias_axis = BiasAxis::PerColumn;
    // Chunks of whole rows (BiasGelu) or of ~4096 elements, each done while it is in L1.
    const int64_t row = bias ? cols : 1;
    const int64_t rows_per_chunk = std::max<int64_t>(1, 4096 / row);
    const int64_t rows = n / row;
    const int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
    const float inv_alpha = 1.0f / alpha_;
    ctx.threads().parallel_for_cost(chunks, 0.5 * static_cast<double>(rows_per_chunk * row), [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t r0 = c * rows_per_chunk, r1 = std::min(rows, r0 + rows_per_chunk);
        const int64_t off = r0 * row, len = (r1 - r0) * row;
        std::memcpy(py + off, px + off, len * sizeof(float));
        if (bias)
          apply_epilogue(py + off, cols, r1 - r0, cols, ep);
        else
          apply_epilogue(py + off, len, 1, len, ep);
        if constexpr (kOp == Op::QuickGelu)  // SiLU(alpha x) / alpha = x sigmoid(alpha x)
          for (int64_t i = 0; i < len; ++i) py[off + i] *= inv_alpha;
      }
    });
  }

 private:
  bool tanh_;
  float alpha_;
};

template <Op kOp>
void add(KernelRegistry& r, const char* name) {
  add_fused_kernel<RefElementwise<kOp>>(r, name, "reference", 0);
  r.add(kFusorDomain, name, "fast", kFastPriority, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    if (known_not_float(info, 0)) return make_reference(info);
    return std::make_unique<FastElementwise<kOp>>(info);
  });
}

}  // namespace

void register_fused_elementwise_kernels(KernelRegistry& r) {
  add<Op::Gelu>(r, "Gelu");
  add<Op::BiasGelu>(r, "BiasGelu");
  add<Op::QuickGelu>(r, "QuickGelu");
  add<Op::Silu>(r, "Silu");
}

}  // namespace fusor::fused
