// The fast QConv (NCHW: X, Z and Y transposed around the NHWC core), NhwcQConv, ConvIntegerToFloat
// (dynamic quantization, NCHW: X transposed in, the float result out) and NhwcConvIntegerToFloat
// kernels:
// weights prepacked at creation (kernels/int8/qconv.h); 1-D and 2-D convolutions. Anything else
// (non-constant weights or scales, other ranks) runs the reference kernel.
#include <algorithm>
#include <cstring>

#include "kernels/common/conv_params.h"
#include "kernels/common/strided_copy.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/fused/activation.h"
#include "kernels/int8/qops.h"
#include "kernels/int8/u8_layout.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {
namespace {

std::vector<int32_t> as_int32(const Tensor* t) {
  std::vector<int32_t> v;
  if (!t) return v;
  for (int64_t i = 0; i < t->numel(); ++i) v.push_back(static_cast<int32_t>(t->as_int64(i)));
  return v;
}

std::vector<float> as_float(const Tensor* t) {
  std::vector<float> v;
  if (!t) return v;
  for (int64_t i = 0; i < t->numel(); ++i) v.push_back(static_cast<float>(t->as_double(i)));
  return v;
}

// A conv's shapes from X's (NHWC when nhwc, else NCHW): the 2-D view the int8 core runs and the
// output's shape in X's layout.
struct ConvShapes {
  Conv2dShape s;
  Shape out;
};

ConvShapes conv_shapes(const WindowAttrs& attrs, const Tensor& x, const Shape& w_shape, bool nhwc) {
  const int r = x.rank();
  Shape nchw = x.shape();
  if (nhwc) {
    nchw = {x.dim(0), x.dim(r - 1)};
    for (int d = 1; d < r - 1; ++d) nchw.push_back(x.dim(d));
  }
  const ConvParams p = conv_params(attrs, nchw, w_shape);
  ConvShapes c{conv2d_shape(p), {p.batch}};
  if (!nhwc) c.out.push_back(p.out_channels);
  for (int64_t d : p.out) c.out.push_back(d);
  if (nhwc) c.out.push_back(p.out_channels);
  return c;
}

// The weight's part of a conv's spec (W: OIHW or OIW); false when the group does not divide C_out.
bool set_weight_dims(QConvSpec& spec, const Tensor& w, int64_t group) {
  spec.out_c = w.dim(0);
  spec.in_c_per_group = w.dim(1);
  spec.k_h = w.rank() == 4 ? w.dim(2) : 1;
  spec.k_w = w.dim(w.rank() - 1);
  spec.group = group;
  return group > 0 && spec.out_c % group == 0;
}

// Strides and dilations all 1 (absent ones are 1).
bool unit_stride(const WindowAttrs& a) {
  auto ones = [](const std::vector<int64_t>& v) { return std::all_of(v.begin(), v.end(), [](int64_t d) { return d == 1; }); };
  return ones(a.strides) && ones(a.dilations);
}

class FastQConv : public FastKernel {
 public:
  FastQConv(const KernelInfo& info, bool nhwc) : FastKernel(info), attrs_(WindowAttrs::parse(info.n(), WindowKind::Conv)), nhwc_(nhwc) {
    const auto& c = info.const_inputs;
    auto cin = [&](size_t i) -> const Tensor* { return i < c.size() && c[i] ? c[i].get() : nullptr; };
    const Tensor *w = cin(1), *ws = cin(2), *wz = cin(3), *b = cin(4), *bs = cin(5);
    if (!w || !ws || !is_8bit(w->dtype()) || (w->rank() != 3 && w->rank() != 4)) return;
    if (node_has_input(info, 3) && !wz) return;
    if (node_has_input(info, 4) && (!b || !bs || b->dtype() != DataType::Int32)) return;
    if (info.input_types.empty() || !info.input_types[0] || !is_8bit(info.input_types[0]->elem)) return;
    QConvSpec spec = qconv_params(info.n());
    spec.signed_act = info.input_types[0]->elem == DataType::Int8;
    spec.unit_stride = unit_stride(attrs_);
    if (!set_weight_dims(spec, *w, attrs_.group)) return;
    if ((ws->numel() != 1 && ws->numel() != spec.out_c) || (wz && wz->numel() != ws->numel())) return;
    if (b && (b->numel() != spec.out_c || (bs->numel() != 1 && bs->numel() != spec.out_c))) return;
    w_shape_ = w->shape();
    const std::vector<float> scales = as_float(ws), bscales = as_float(bs);
    const std::vector<int32_t> zeros = as_int32(wz), bias = as_int32(b);
    weights_ = std::make_unique<QConvWeights>(spec, w->raw(), w->dtype() == DataType::Int8, scales.data(),
                                              static_cast<int64_t>(scales.size()), wz ? zeros.data() : nullptr,
                                              static_cast<int64_t>(zeros.size()), b ? bias.data() : nullptr,
                                              b ? bscales.data() : nullptr, static_cast<int64_t>(bscales.size()),
                                              active_int8_isa());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (!weights_ || (x.rank() != 3 && x.rank() != 4) || x.rank() != static_cast<int>(w_shape_.size()) ||
        x.dtype() != (weights_->spec().signed_act ? DataType::Int8 : DataType::UInt8))
      return fallback_->compute(ctx);
    const ConvShapes shapes = conv_shapes(attrs_, x, w_shape_, nhwc_);
    const Conv2dShape& s = shapes.s;
    const Shape& out_shape = shapes.out;
    Tensor& y = ctx.output(0, out_shape, x.dtype());
    const Tensor* z = weights_->spec().residual ? optional_input(ctx, 6) : nullptr;
    if (weights_->spec().residual && (!z || z->shape() != out_shape || z->dtype() != x.dtype()))
      throw_bad_input(ctx.where() + ": the residual Z must be present and shaped like the output " + shape_str(out_shape));
    auto scratch = [&ctx](size_t bytes) { return ctx.scratch(bytes); };
    ThreadPool* pool = &ctx.threads();
    if (nhwc_) {
      weights_->run(s, x.data<uint8_t>(), z ? z->data<uint8_t>() : nullptr, y.data<uint8_t>(), pool, scratch);
      return;
    }
    const int64_t in_sp = s.in_h * s.in_w, out_sp = s.out_h * s.out_w;
    auto* xt = static_cast<uint8_t*>(ctx.scratch(static_cast<size_t>(s.batch * s.in_c * in_sp)));
    auto* yt = static_cast<uint8_t*>(ctx.scratch(static_cast<size_t>(s.batch * s.out_c * out_sp)));
    uint8_t* zt = nullptr;
    nchw_to_nhwc_u8(x.data<uint8_t>(), s.batch, s.in_c, in_sp, xt, pool);
    if (z) {
      zt = static_cast<uint8_t*>(ctx.scratch(static_cast<size_t>(s.batch * s.out_c * out_sp)));
      nchw_to_nhwc_u8(z->data<uint8_t>(), s.batch, s.out_c, out_sp, zt, pool);
    }
    weights_->run(s, xt, zt, yt, pool, scratch);
    nhwc_to_nchw_u8(yt, s.batch, s.out_c, out_sp, y.data<uint8_t>(), pool);
  }

 private:
  WindowAttrs attrs_;
  bool nhwc_;
  Shape w_shape_;
  std::unique_ptr<QConvWeights> weights_;
};

// ConvIntegerToFloat: W, WScale, WZero and B constant; X uint8 with one scale and zero point per
// call. The weights are packed once (QConvSpec::dynamic); each call runs QConvWeights::run_float
// (NCHW: X transposed to NHWC first, the float NHWC result transposed to Y after). The int32
// sums are exact and multiplied by the float product x_scale * w_scale[oc], as the unfused group
// does, so without B the result is the group's to the bit.
class FastConvIntegerToFloat : public FastKernel {
 public:
  FastConvIntegerToFloat(const KernelInfo& info, bool nhwc)
      : FastKernel(info), attrs_(WindowAttrs::parse(info.n(), WindowKind::Conv)), nhwc_(nhwc),
        act_(fused::activation_of(info.n())) {
    const auto& c = info.const_inputs;
    auto cin = [&](size_t i) -> const Tensor* { return i < c.size() && c[i] ? c[i].get() : nullptr; };
    const Tensor *w = cin(1), *ws = cin(3), *wz = cin(5), *b = cin(6);
    if (!w || !ws || ws->dtype() != DataType::Float || !is_8bit(w->dtype()) || (w->rank() != 3 && w->rank() != 4))
      return;
    if ((node_has_input(info, 5) && (!wz || wz->dtype() != w->dtype())) ||
        (node_has_input(info, 6) && (!b || b->dtype() != DataType::Float)))
      return;
    if (info.input_types.empty() || !info.input_types[0] || info.input_types[0]->elem != DataType::UInt8) return;
    QConvSpec spec;
    spec.dynamic = true;
    spec.unit_stride = unit_stride(attrs_);
    if (!set_weight_dims(spec, *w, attrs_.group)) return;
    auto per_channel = [&](const Tensor* t) { return !t || t->numel() == 1 || t->numel() == spec.out_c; };
    if (!per_channel(ws) || !per_channel(wz) || (b && b->numel() != spec.out_c)) return;
    w_shape_ = w->shape();
    bias_ = as_float(b);
    const std::vector<float> scales = as_float(ws);
    const std::vector<int32_t> zeros = as_int32(wz);
    weights_ = std::make_unique<QConvWeights>(spec, w->raw(), w->dtype() == DataType::Int8, scales.data(),
                                              static_cast<int64_t>(scales.size()), wz ? zeros.data() : nullptr,
                                              static_cast<int64_t>(zeros.size()), nullptr, nullptr, 0,
                                              active_int8_isa());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& xs = required_input(ctx, 2);
    const Tensor* xz = optional_input(ctx, 4);
    if (!weights_ || x.dtype() != DataType::UInt8 || x.rank() != static_cast<int>(w_shape_.size()) ||
        xs.dtype() != DataType::Float || xs.numel() != 1 || (xz && (xz->dtype() != DataType::UInt8 || xz->numel() != 1)))
      return fallback_->compute(ctx);
    const ConvShapes shapes = conv_shapes(attrs_, x, w_shape_, nhwc_);
    const Conv2dShape& s = shapes.s;
    Tensor& y = ctx.output(0, shapes.out, DataType::Float);
    if (y.numel() == 0) return;
    auto scratch = [&ctx](size_t bytes) { return ctx.scratch(bytes); };
    ThreadPool* pool = &ctx.threads();
    const int32_t x_zero = xz ? xz->data<uint8_t>()[0] : 0;
    const float* bias = bias_.empty() ? nullptr : bias_.data();
    if (nhwc_) {
      weights_->run_float(s, x.data<uint8_t>(), x_zero, xs.data<float>()[0], bias, act_, y.data<float>(), pool, scratch);
      return;
    }
    const int64_t in_sp = s.in_h * s.in_w, out_sp = s.out_h * s.out_w;
    auto* xt = static_cast<uint8_t*>(ctx.scratch(static_cast<size_t>(s.batch * s.in_c * in_sp)));
    nchw_to_nhwc_u8(x.data<uint8_t>(), s.batch, s.in_c, in_sp, xt, pool);
    auto* yt = static_cast<float*>(ctx.scratch(static_cast<size_t>(y.numel()) * sizeof(float)));
    weights_->run_float(s, xt, x_zero, xs.data<float>()[0], bias, act_, yt, pool, scratch);
    // Y[n, c, i] = yt[n, i, c] over the spatial positions i.
    const Tensor src = Tensor::view(DataType::Float, {s.batch, out_sp, s.out_c}, yt);
    Tensor dst = y.reshaped({s.batch, s.out_c, out_sp});
    strided_copy(src, 0, {out_sp * s.out_c, 1, s.out_c}, dst, pool);
  }

 private:
  WindowAttrs attrs_;
  bool nhwc_;
  ActivationSpec act_;
  Shape w_shape_;
  std::vector<float> bias_;
  std::unique_ptr<QConvWeights> weights_;
};

}  // namespace

void register_int8_conv_kernels(KernelRegistry& r) {
  r.add(kFusorDomain, "QConv", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastQConv>(i, false); });
  r.add(kFusorDomain, "NhwcQConv", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastQConv>(i, true); });
  r.add(kFusorDomain, "ConvIntegerToFloat", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastConvIntegerToFloat>(i, false); });
  r.add(kFusorDomain, "NhwcConvIntegerToFloat", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastConvIntegerToFloat>(i, true); });
}

}  // namespace fusor::int8
