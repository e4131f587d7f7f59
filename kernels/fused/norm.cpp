// LayerNorm, RMSNorm and SkipLayerNorm (the last axes from `axis` on are one normalized row).
//   reference: LayerNorm and SkipLayerNorm through ONNX's Add and LayerNormalization reference
//              kernels; RMSNorm as a plain loop in double.
//   fast:      one sweep per row: the row is read from memory once (SkipLayerNorm forms
//              X + Skip + Bias as it reads, into its output), its statistics are taken while it
//              is in L1 and the normalized row is written, by the vector row loops of
//              kernels/rowwise/row_ops.h (AVX-512 / AVX2 / scalar). Threaded over rows. float32, Scale/B/Gamma/Beta/Bias of one row's size;
//              anything else goes to the reference.
#include <algorithm>
#include <cmath>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/fused/common.h"
#include "kernels/fused/inner_op.h"
#include "kernels/rowwise/row_ops.h"

namespace fusor::fused {
namespace {

enum class Norm { Layer, Rms, SkipLayer };

// The normalized row length for `axis` (negative counts from the end).
int64_t row_length(const Shape& s, int64_t axis, const std::string& where) {
  const int64_t r = static_cast<int64_t>(s.size());
  if (axis < -r || axis >= r) throw_bad_input(where + ": axis " + std::to_string(axis) + " out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  int64_t n = 1;
  for (int64_t d = axis; d < r; ++d) n *= s[d];
  return n;
}

void check_row_param(const Tensor* t, int64_t d, const char* what, const std::string& where) {
  if (t && t->numel() != d && t->numel() != 1)
    throw_bad_input(where + ": " + what + " has shape " + shape_str(t->shape()) + ", expected " + std::to_string(d) +
                    " values (one normalized row)");
}

class RefLayerNorm : public Kernel {
 public:
  explicit RefLayerNorm(const KernelInfo& info)
      : ln_("LayerNormalization", 3,
            {Attribute::make_int("axis", info.n().attr_int("axis", -1)),
             Attribute::make_float("epsilon", info.n().attr_float("epsilon", 1e-5f))}) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    write_output(ctx, 0, ln_.run1(ctx, {&required_input(ctx, 0), &required_input(ctx, 1), optional_input(ctx, 2)}));
  }

 private:
  InnerOp ln_;
};

class RefSkipLayerNorm : public Kernel {
 public:
  explicit RefSkipLayerNorm(const KernelInfo& info)
      : add_("Add", 2),
        ln_("LayerNormalization", 3,
            {Attribute::make_int("axis", -1), Attribute::make_float("epsilon", info.n().attr_float("epsilon", 1e-5f))}) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const Tensor* bias = optional_input(ctx, 4);
    Tensor sum = add_.run1(ctx, {&x, &required_input(ctx, 1)});
    if (bias) sum = add_.run1(ctx, {&sum, bias});
    if (sum.shape() != x.shape())
      throw_bad_input(ctx.where() + ": X + Skip + Bias has shape " + shape_str(sum.shape()) + ", not X's " + shape_str(x.shape()));
    write_output(ctx, 0, ln_.run1(ctx, {&sum, &required_input(ctx, 2), optional_input(ctx, 3)}));
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) write_output(ctx, 1, sum);
  }

 private:
  InnerOp add_, ln_;
};

class RefRmsNorm : public Kernel {
 public:
  explicit RefRmsNorm(const KernelInfo& info)
      : axis_(info.n().attr_int("axis", -1)), eps_(info.n().attr_float("epsilon", 1e-5f)) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    const Tensor& scale = required_input(ctx, 1);
    const int64_t d = row_length(x.shape(), axis_, ctx.where());
    check_row_param(&scale, d, "Scale", ctx.where());
    if (scale.dtype() != x.dtype()) throw_bad_input(ctx.where() + ": Scale's element type differs from X's");
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    dispatch_float(x.dtype(), ctx.where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      const T* ps = scale.data<T>();
      T* py = y.data<T>();
      const int64_t rows = d ? x.numel() / d : 0;
      for (int64_t r = 0; r < rows; ++r) {
        double ms = 0;
        for (int64_t j = 0; j < d; ++j) ms += double(px[r * d + j]) * double(px[r * d + j]);
        ms /= double(d);
        const double inv = 1.0 / std::sqrt(ms + double(eps_));
        for (int64_t j = 0; j < d; ++j)
          py[r * d + j] = static_cast<T>(double(px[r * d + j]) * inv * double(ps[scale.numel() == 1 ? 0 : j]));
      }
    });
  }

 private:
  int64_t axis_;
  float eps_;
};

template <Norm kNorm>
class FastNorm : public FastFusedKernel {
 public:
  explicit FastNorm(const KernelInfo& info)
      : FastFusedKernel(info),
        axis_(kNorm == Norm::SkipLayer ? -1 : info.n().attr_int("axis", -1)),
        eps_(info.n().attr_float("epsilon", 1e-5f)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    // Inputs by role: Skip, Scale (Gamma), shift (B / Beta), Bias.
    const Tensor* skip = kNorm == Norm::SkipLayer ? &required_input(ctx, 1) : nullptr;
    const Tensor& scale = required_input(ctx, kNorm == Norm::SkipLayer ? 2 : 1);
    const Tensor* shift = kNorm == Norm::Rms ? nullptr : optional_input(ctx, kNorm == Norm::SkipLayer ? 3 : 2);
    const Tensor* bias = kNorm == Norm::SkipLayer ? optional_input(ctx, 4) : nullptr;
    const int64_t d = x.rank() ? row_length(x.shape(), axis_, where_) : 0;
    auto row_sized = [&](const Tensor* t) { return !t || (t->dtype() == DataType::Float && t->numel() == d); };
    if (x.dtype() != DataType::Float || d == 0 || !row_sized(&scale) || !row_sized(shift) || !row_sized(bias) ||
        (skip && (skip->dtype() != DataType::Float || skip->shape() != x.shape())))
      return fallback_->compute(ctx);
    Tensor& y = ctx.output(0, x.shape(), DataType::Float);
    float* sum_out = nullptr;
    if (kNorm == Norm::SkipLayer && ctx.num_outputs() > 1 && ctx.output_wanted(1))
      sum_out = ctx.output(1, x.shape(), DataType::Float).data<float>();
    const float* px = x.data<float>();
    const float* pk = skip ? skip->data<float>() : nullptr;
    const float* pb = bias ? bias->data<float>() : nullptr;
    const float* ps = scale.data<float>();
    const float* ph = shift ? shift->data<float>() : nullptr;
    float* py = y.data<float>();
    const float eps = eps_;
    const int64_t rows = x.numel() / d;
    const rowwise::RowOps& ops = rowwise::row_ops();
    // ~0.5 ns an element with the row coming from L2 (the vector loops; 0.3 from L1).
    ctx.threads().parallel_for_cost(rows, 0.5 * static_cast<double>(d), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        ops.norm(px + r * d, pk ? pk + r * d : nullptr, pb, sum_out ? sum_out + r * d : nullptr, py + r * d, d, ps, ph,
                 eps, kNorm != Norm::Rms);
    });
  }

 private:
  int64_t axis_;
  float eps_;
};

template <class Ref, Norm kNorm>
void add(KernelRegistry& r, const char* name) {
  add_fused_kernel<Ref>(r, name, "reference", 0);
  r.add(kFusorDomain, name, "fast", kFastPriority, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    if (known_not_float(info, 0)) return make_reference(info);
    return std::make_unique<FastNorm<kNorm>>(info);
  });
}

}  // namespace

void register_fused_norm_kernels(KernelRegistry& r) {
  add<RefLayerNorm, Norm::Layer>(r, "LayerNorm");
  add<RefRmsNorm, Norm::Rms>(r, "RMSNorm");
  add<RefSkipLayerNorm, Norm::SkipLayer>(r, "SkipLayerNorm");
}

}  // namespace fusor::fused
