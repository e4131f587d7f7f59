// FusedConv (Conv + residual Z + activation), NhwcConv (the same on channels-last data) and
// NhwcConvTranspose.
//   reference: ONNX's Conv / ConvTranspose reference kernel, then Add(Z), then the activation;
//              NHWC forms transpose to channels-first and back around it.
//   fast:      the conv core (kernels/conv/conv.h) with bias, residual and activation in its
//              epilogue, NCHW or NHWC directly (float32, 1-D and 2-D; anything else falls back).
#include <optional>

#include "kernels/common/conv_params.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/float16_widening.h"
#include "kernels/conv/conv.h"
#include "kernels/fused/activation.h"
#include "kernels/fused/common.h"
#include "kernels/fused/inner_op.h"

namespace fusor::fused {
namespace {

// Reference for the conv family: `layout_nhwc` transposes X, Z and Y around the channels-first op.
class RefConvFamily : public Kernel {
 public:
  RefConvFamily(const KernelInfo& info, const char* inner, bool nhwc, bool has_residual)
      : act_(activation_of(info.n())),
        conv_(inner, 3, attrs_without_activation(info.n())),
        add_("Add", 2),
        nhwc_(nhwc),
        has_residual_(has_residual) {}

  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x_in = required_input(ctx, 0);
    const Tensor& w = required_input(ctx, 1);
    const Tensor* b = optional_input(ctx, 2);
    const Tensor* z_in = has_residual_ ? optional_input(ctx, 3) : nullptr;
    if (nhwc_ && x_in.rank() < 3)
      throw_bad_input(ctx.where() + ": X must have rank >= 3 (N, spatial..., C), got " + shape_str(x_in.shape()));
    Tensor x = nhwc_ ? permuted(x_in, to_channels_first(x_in.rank())) : x_in;
    Tensor y = conv_.run1(ctx, {&x, &w, b});
    if (z_in) {
      Tensor z = nhwc_ && z_in->rank() == y.rank() ? permuted(*z_in, to_channels_first(z_in->rank())) : *z_in;
      if (z.shape() != y.shape())
        throw_bad_input(ctx.where() + ": residual Z has shape " + shape_str(z_in->shape()) + ", the output " +
                        shape_str(nhwc_ ? permuted(y, to_channels_last(y.rank())).shape() : y.shape()));
      y = add_.run1(ctx, {&y, &z});
    }
    activate_in_place(y, act_, ctx.where());
    write_output(ctx, 0, nhwc_ ? permuted(y, to_channels_last(y.rank())) : y);
  }

 private:
  ActivationSpec act_;
  InnerOp conv_, add_;
  bool nhwc_, has_residual_;
};

struct RefFusedConv : RefConvFamily {
  explicit RefFusedConv(const KernelInfo& i) : RefConvFamily(i, "Conv", false, true) {}
};
struct RefNhwcConv : RefConvFamily {
  explicit RefNhwcConv(const KernelInfo& i) : RefConvFamily(i, "Conv", true, true) {}
};
struct RefNhwcConvTranspose : RefConvFamily {
  explicit RefNhwcConvTranspose(const KernelInfo& i) : RefConvFamily(i, "ConvTranspose", true, false) {}
};

// FusedConv / NhwcConv on the conv core: y = act(conv(x, w) + b + z) in the epilogue.
class FastConv : public FastFusedKernel {
 public:
  FastConv(const KernelInfo& info, ConvLayout layout)
      : FastFusedKernel(info),
        layout_(layout),
        attrs_(WindowAttrs::parse(info.n(), WindowKind::Conv)),
        act_(activation_of(info.n())) {
    if (const Tensor* w = const_float(info, 1); w && (w->rank() == 3 || w->rank() == 4) && attrs_.group > 0 &&
                                                w->dim(0) % attrs_.group == 0)
      weights_ = pack_conv_weights(w->data<float>(), w->shape(), attrs_.group, layout_, info.prepack);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& w = required_input(ctx, 1);
    const Tensor* b = optional_input(ctx, 2);
    const Tensor* z = optional_input(ctx, 3);
    if (x.dtype() != DataType::Float || w.dtype() != DataType::Float || (b && b->dtype() != DataType::Float) ||
        (z && z->dtype() != DataType::Float) || (x.rank() != 3 && x.rank() != 4) || w.rank() != x.rank())
      return fallback_->compute(ctx);
    const bool nhwc = layout_ == ConvLayout::NHWC;
    Shape x_cf = x.shape();  // channels-first view of X's shape, for the geometry
    if (nhwc) {
      x_cf = {x.dim(0), x.dim(-1)};
      for (int i = 1; i < x.rank() - 1; ++i) x_cf.push_back(x.dim(i));
    }
    const ConvParams p = conv_params(attrs_, x_cf, w.shape());
    if (b && (b->rank() != 1 || b->dim(0) != p.out_channels))
      throw_bad_input(where_ + ": bias B has shape " + shape_str(b->shape()) + ", expected " +
                      std::to_string(p.out_channels));
    Shape out = p.output_shape();
    if (nhwc) {
      out = {p.batch};
      for (int64_t d : p.out) out.push_back(d);
      out.push_back(p.out_channels);
    }
    if (z && z->shape() != out) return fallback_->compute(ctx);  // broadcast residuals: reference
    Tensor& y = ctx.output(0, out, DataType::Float);
    std::optional<PackedConvWeights> local;
    const PackedConvWeights* pw = weights_ ? &*weights_ : nullptr;
    if (!pw) pw = &local.emplace(pack_conv_weights(w.data<float>(), w.shape(), attrs_.group, layout_));
    Epilogue ep;
    ep.bias = b ? b->data<float>() : nullptr;
    ep.bias_axis = b ? (nhwc ? BiasAxis::PerColumn : BiasAxis::PerRow) : BiasAxis::None;
    ep.residual = z ? z->data<float>() : nullptr;
    ep.act = act_;
    conv2d(*pw, conv2d_shape(p), x.data<float>(), y.data<float>(), ep, gemm_run(ctx));
  }

 private:
  ConvLayout layout_;
  WindowAttrs attrs_;
  ActivationSpec act_;
  std::optional<PackedConvWeights> weights_;
};

template <ConvLayout L>
struct FastConvOf : FastConv {
  explicit FastConvOf(const KernelInfo& i) : FastConv(i, L) {}
};

template <class Fast>
void add_fast_conv(KernelRegistry& r, const char* op) {
  r.add(kFusorDomain, op, "fast", kFastPriority, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    if (known_not_float(info, 0)) return make_reference(info);
    return std::make_unique<Fast>(info);
  });
}

}  // namespace

void register_fused_conv_kernels(KernelRegistry& r) {
  add_fused_kernel<RefFusedConv>(r, "FusedConv", "reference", 0);
  add_fused_kernel<RefNhwcConv>(r, "NhwcConv", "reference", 0);
  add_fused_kernel<RefNhwcConvTranspose>(r, "NhwcConvTranspose", "reference", 0);
  add_fast_conv<FastConvOf<ConvLayout::NCHW>>(r, "FusedConv");
  add_fast_conv<FastConvOf<ConvLayout::NHWC>>(r, "NhwcConv");
}

}  // namespace fusor::fused
