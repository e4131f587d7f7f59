// fusor.NhwcConv on XNNPACK's convolution2d_nhwc_f32 (dense, grouped and depthwise: XNNPACK picks
// its depthwise path for one input and one output channel per group). Fuses only a clamp
// (activation "", Relu, Clip), as XNNPACK's output_min/output_max; everything else (a residual Z,
// other activations, weights or bias known only at run time, non-float data, 1-D convolutions)
// runs on the cpu kernel.
#include <limits>

#include "kernels/common/conv_params.h"
#include "kernels/fused/activation.h"
#include "kernels/xnnpack/xnn_kernels.h"

#ifdef FUSOR_HAVE_XNNPACK
#include <xnnpack.h>

namespace fusor::xnnpack {
namespace {

class XnnConv : public Kernel {
 public:
  XnnConv(const KernelInfo& info, const Tensor& w, const Tensor* b, Clamp clamp)
      : where_(info.where()), attrs_(WindowAttrs::parse(info.n(), WindowKind::Conv)), clamp_(clamp),
        w_shape_(w.shape()), fallback_(cpu_kernel(info)) {
    // ONNX's OIHW (O ordered by group) to XNNPACK's [groups, out per group, kh, kw, in per group],
    // which is OHWI of the whole tensor.
    const int64_t O = w.dim(0), I = w.dim(1), KH = w.dim(2), KW = w.dim(3);
    const float* src = w.data<float>();
    ohwi_.resize(static_cast<size_t>(O * KH * KW * I));
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < I; ++i)
        for (int64_t y = 0; y < KH; ++y)
          for (int64_t x = 0; x < KW; ++x) ohwi_[((o * KH + y) * KW + x) * I + i] = src[((o * I + i) * KH + y) * KW + x];
    if (b) bias_.assign(b->data<float>(), b->data<float>() + b->numel());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (x.dtype() != DataType::Float || x.rank() != 4) return fallback_->compute(ctx);
    const Shape x_cf = {x.dim(0), x.dim(3), x.dim(1), x.dim(2)};
    const ConvParams p = conv_params(attrs_, x_cf, w_shape_);
    Tensor& y = ctx.output(0, {p.batch, p.out[0], p.out[1], p.out_channels}, DataType::Float);
    std::lock_guard<std::mutex> lock(mu_);
    if (!op_ || p.in[0] != op_h_ || p.in[1] != op_w_) create(p);
    check_status(xnn_setup_convolution2d_nhwc_f32(op_.get(), p.batch, p.in[0], p.in[1], x.data<float>(),
                                                  y.data<float>(), thread_pool_for(ctx.threads().num_threads())),
                 where_, "setup_convolution2d_nhwc_f32");
    check_status(xnn_run_operator(op_.get(), thread_pool_for(ctx.threads().num_threads())), where_, "run_operator");
  }

 private:
  void create(const ConvParams& p) {
    xnn_operator_t op = nullptr;
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    check_status(xnn_create_convolution2d_nhwc_f32(
                     u(p.pad_begin[0]), u(p.pad_end[1]), u(p.pad_end[0]), u(p.pad_begin[1]), u(p.kernel[0]),
                     u(p.kernel[1]), u(p.strides[0]), u(p.strides[1]), u(p.dilations[0]), u(p.dilations[1]),
                     u(p.group), p.in_per_group(), p.out_per_group(), p.in_channels, p.out_channels, ohwi_.data(),
                     bias_.empty() ? nullptr : bias_.data(), clamp_.lo, clamp_.hi, 0, &op),
                 where_, "create_convolution2d_nhwc_f32");
    op_.reset(op);
    op_h_ = p.in[0];
    op_w_ = p.in[1];
  }

  std::string where_;
  WindowAttrs attrs_;
  Clamp clamp_;
  Shape w_shape_;
  std::vector<float> ohwi_, bias_;
  std::unique_ptr<Kernel> fallback_;
  std::mutex mu_;
  OperatorPtr op_;
  int64_t op_h_ = -1, op_w_ = -1;
};

std::unique_ptr<Kernel> make_conv(const KernelInfo& info) {
  require_xnnpack(info);
  const Node& n = info.n();
  const Tensor* w = const_float_input(info, 1);
  const bool has_b = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
  const Tensor* b = has_b ? const_float_input(info, 2) : nullptr;
  const bool has_z = n.inputs.size() > 3 && n.inputs[3] != kNoValue;
  auto clamp = clamp_of(fused::activation_of(n));
  if (!w || w->rank() != 4 || (has_b && !b) || has_z || !clamp || input_known_not_float(info, 0))
    return cpu_kernel(info);
  return std::make_unique<XnnConv>(info, *w, b, *clamp);
}

}  // namespace

void register_xnnpack_conv(KernelRegistry& r) { r.add(kFusorDomain, "NhwcConv", kImpl, kPriority, make_conv); }

}  // namespace fusor::xnnpack
#endif
