// fusor.NhwcConvTranspose on XNNPACK's deconvolution2d_nhwc_f32, with a clamp activation at most.
// Negative pads (an output_shape larger than the natural one), non-constant weights or bias, and
// non-float data run on the cpu kernel.
#include "kernels/common/conv_params.h"
#include "kernels/fused/activation.h"
#include "kernels/xnnpack/xnn_kernels.h"

#ifdef FUSOR_HAVE_XNNPACK
#include <xnnpack.h>

namespace fusor::xnnpack {
namespace {

class XnnDeconv : public Kernel {
 public:
  XnnDeconv(const KernelInfo& info, const Tensor& w, const Tensor* b, Clamp clamp)
      : where_(info.where()), attrs_(WindowAttrs::parse(info.n(), WindowKind::ConvTranspose)), clamp_(clamp),
        w_shape_(w.shape()), fallback_(cpu_kernel(info)) {
    // ONNX's [C_in, C_out / group, kh, kw] (C_in ordered by group) to XNNPACK's
    // [group, out per group, kh, kw, in per group].
    const int64_t group = attrs_.group, C = w.dim(0), O = w.dim(1), KH = w.dim(2), KW = w.dim(3), I = C / group;
    const float* src = w.data<float>();
    packed_.resize(static_cast<size_t>(C * O * KH * KW));
    for (int64_t g = 0; g < group; ++g)
      for (int64_t i = 0; i < I; ++i)
        for (int64_t o = 0; o < O; ++o)
          for (int64_t y = 0; y < KH; ++y)
            for (int64_t x = 0; x < KW; ++x)
              packed_[(((g * O + o) * KH + y) * KW + x) * I + i] = src[(((g * I + i) * O + o) * KH + y) * KW + x];
    if (b) bias_.assign(b->data<float>(), b->data<float>() + b->numel());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (x.dtype() != DataType::Float || x.rank() != 4) return fallback_->compute(ctx);
    const Shape x_cf = {x.dim(0), x.dim(3), x.dim(1), x.dim(2)};
    const ConvParams p = conv_transpose_params(attrs_, x_cf, w_shape_);
    for (int i = 0; i < 2; ++i)
      if (p.pad_begin[i] < 0 || p.pad_end[i] < 0 || p.output_padding[i] < 0 ||
          (p.output_padding[i] > 0 && p.output_padding[i] >= p.strides[i]))
        return fallback_->compute(ctx);
    Tensor& y = ctx.output(0, {p.batch, p.out[0], p.out[1], p.out_channels}, DataType::Float);
    pthreadpool* tp = thread_pool_for(ctx.threads().num_threads());
    std::lock_guard<std::mutex> lock(mu_);
    if (!op_ || p.pad_begin != pads_begin_ || p.pad_end != pads_end_) create(p);
    check_status(xnn_setup_deconvolution2d_nhwc_f32(op_.get(), p.batch, p.in[0], p.in[1],
                                                    static_cast<uint32_t>(p.output_padding[0]),
                                                    static_cast<uint32_t>(p.output_padding[1]), x.data<float>(),
                                                    y.data<float>(), tp),
                 where_, "setup_deconvolution2d_nhwc_f32");
    check_status(xnn_run_operator(op_.get(), tp), where_, "run_operator");
  }

 private:
  void create(const ConvParams& p) {
    xnn_operator_t op = nullptr;
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    check_status(xnn_create_deconvolution2d_nhwc_f32(
                     u(p.pad_begin[0]), u(p.pad_end[1]), u(p.pad_end[0]), u(p.pad_begin[1]), u(p.kernel[0]),
                     u(p.kernel[1]), u(p.strides[0]), u(p.strides[1]), u(p.dilations[0]), u(p.dilations[1]),
                     u(p.group), p.in_per_group(), p.out_per_group(), p.in_channels, p.out_channels, packed_.data(),
                     bias_.empty() ? nullptr : bias_.data(), clamp_.lo, clamp_.hi, 0, &op),
                 where_, "create_deconvolution2d_nhwc_f32");
    op_.reset(op);
    pads_begin_ = p.pad_begin;
    pads_end_ = p.pad_end;
  }

  std::string where_;
  WindowAttrs attrs_;
  Clamp clamp_;
  Shape w_shape_;
  std::vector<float> packed_, bias_;
  std::unique_ptr<Kernel> fallback_;
  std::mutex mu_;
  OperatorPtr op_;
  Shape pads_begin_, pads_end_;
};

std::unique_ptr<Kernel> make_deconv(const KernelInfo& info) {
  require_xnnpack(info);
  const Node& n = info.n();
  const Tensor* w = const_float_input(info, 1);
  const bool has_b = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
  const Tensor* b = has_b ? const_float_input(info, 2) : nullptr;
  auto clamp = clamp_of(fused::activation_of(n));
  const Attribute* group = n.attr("group");
  const int64_t g = group ? group->i : 1;
  if (!w || w->rank() != 4 || g < 1 || w->dim(0) % g != 0 || (has_b && !b) || !clamp || input_known_not_float(info, 0))
    return cpu_kernel(info);
  return std::make_unique<XnnDeconv>(info, *w, b, *clamp);
}

}  // namespace

void register_xnnpack_deconv(KernelRegistry& r) {
  r.add(kFusorDomain, "NhwcConvTranspose", kImpl, kPriority, make_deconv);
}

}  // namespace fusor::xnnpack
#endif
