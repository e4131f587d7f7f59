// Reference kernels of the quantized fusor ops (core/ops/fusor_ops.cpp): each is written as the
// QDQ group it replaces, run through ONNX's reference kernels (DequantizeLinear, Conv, MatMul,
// Add, Mul, QuantizeLinear), so it is obviously the group's function. The fast kernels
// (kernels/int8) are tested against these.
#include <algorithm>
#include <cstring>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/fused/activation.h"
#include "kernels/fused/common.h"
#include "kernels/fused/inner_op.h"
#include "kernels/int8/qops.h"

namespace fusor::int8 {
namespace {

using fused::activate_in_place;
using fused::activation_of;
using fused::InnerOp;
using fused::permuted;
using fused::to_channels_first;
using fused::to_channels_last;
using fused::write_output;

Tensor zero_point_tensor(DataType t, int64_t z) {
  return t == DataType::Int8 ? Tensor::scalar<int8_t>(static_cast<int8_t>(z)) : Tensor::scalar<uint8_t>(static_cast<uint8_t>(z));
}

// DQ(x; scale, zero point) through ONNX's reference kernel.
class Dequant {
 public:
  explicit Dequant(int64_t axis = 1) : op_("DequantizeLinear", 3, {Attribute::make_int("axis", axis)}) {}
  Tensor run(KernelContext& ctx, const Tensor& x, const QParam& q) const {
    const Tensor s = Tensor::scalar<float>(q.scale), z = zero_point_tensor(x.dtype(), q.zero_point);
    return op_.run1(ctx, {&x, &s, &z});
  }
  Tensor run(KernelContext& ctx, const Tensor& x, const Tensor& s, const Tensor* z) const {
    return op_.run1(ctx, {&x, &s, z});
  }

 private:
  InnerOp op_;
};

class Quant {
 public:
  Quant() : op_("QuantizeLinear", 3) {}
  Tensor run(KernelContext& ctx, const Tensor& x, const QParam& q, DataType t) const {
    const Tensor s = Tensor::scalar<float>(q.scale), z = zero_point_tensor(t, q.zero_point);
    return op_.run1(ctx, {&x, &s, &z});
  }

 private:
  InnerOp op_;
};

std::vector<Attribute> conv_attrs(const Node& n) {
  std::vector<Attribute> out;
  for (const char* name : {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    if (const Attribute* a = n.attr(name)) out.push_back(*a);
  return out;
}

// QConv / NhwcQConv: Q(act(Conv(DQ(X), DQ(W), DQ(B)) [-> Q(conv) -> DQ + DQ(Z)])).
class RefQConv : public Kernel {
 public:
  RefQConv(const KernelInfo& info, bool nhwc)
      : nhwc_(nhwc), q_(qconv_params(info.n())), act_(activation_of(info.n())), dq_w_(0),
        conv_("Conv", 3, conv_attrs(info.n())), add_("Add", 2) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x_in = required_input(ctx, 0);
    if (x_in.rank() < 3) throw_bad_input(ctx.where() + ": X must have rank >= 3, got " + shape_str(x_in.shape()));
    const Tensor x = nhwc_ ? permuted(x_in, to_channels_first(x_in.rank())) : x_in;
    const Tensor xf = dq_.run(ctx, x, q_.x);
    const Tensor wf = dq_w_.run(ctx, required_input(ctx, 1), required_input(ctx, 2), optional_input(ctx, 3));
    Tensor bf;
    if (const Tensor* b = optional_input(ctx, 4)) {
      const Tensor* bs = optional_input(ctx, 5);
      if (!bs) throw_bad_input(ctx.where() + ": B needs BScale");
      bf = dq_w_.run(ctx, *b, *bs, nullptr);
    }
    Tensor y = conv_.run1(ctx, {&xf, &wf, bf.defined() ? &bf : nullptr});
    if (q_.residual) {
      const Tensor* z_in = optional_input(ctx, 6);
      if (!z_in) throw_bad_input(ctx.where() + ": conv_scale is set but the residual Z is absent");
      const Tensor z = nhwc_ ? permuted(*z_in, to_channels_first(z_in->rank())) : *z_in;
      const Tensor t = dq_.run(ctx, quant_.run(ctx, y, q_.conv, x.dtype()), q_.conv);
      const Tensor zf = dq_.run(ctx, z, q_.z);
      y = add_.run1(ctx, {&t, &zf});
    }
    activate_in_place(y, act_, ctx.where());
    const Tensor out = quant_.run(ctx, y, q_.y, x.dtype());
    write_output(ctx, 0, nhwc_ ? permuted(out, to_channels_last(out.rank())) : out);
  }

 private:
  bool nhwc_;
  QConvSpec q_;
  ActivationSpec act_;
  Dequant dq_, dq_w_;
  Quant quant_;
  InnerOp conv_, add_;
};

// QMatMul / QMatMulFloat: [Q](act(MatMul(DQ(A), DQ(B)) + bias [-> Q(product) -> DQ + DQ(Z)])).
class RefQMatMul : public Kernel {
 public:
  RefQMatMul(const KernelInfo& info, bool float_out)
      : float_out_(float_out), trans_b_(info.n().attr_int("transB", 0) != 0), act_(activation_of(info.n())),
        dq_b_(trans_b_ ? 0 : -1), dq_bias_(0), matmul_("MatMul", 2), add_("Add", 2) {
    x_ = {info.n().attr_float("x_scale", 1.0f), static_cast<int32_t>(info.n().attr_int("x_zero_point", 0))};
    y_ = {info.n().attr_float("y_scale", 1.0f), static_cast<int32_t>(info.n().attr_int("y_zero_point", 0))};
    residual_ = info.n().attr_float("conv_scale", 0.0f) != 0.0f;
    conv_ = {info.n().attr_float("conv_scale", 1.0f), static_cast<int32_t>(info.n().attr_int("conv_zero_point", 0))};
    z_ = {info.n().attr_float("z_scale", 1.0f), static_cast<int32_t>(info.n().attr_int("z_zero_point", 0))};
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor af = dq_.run(ctx, a, x_);
    Tensor bf = dq_b_.run(ctx, required_input(ctx, 1), required_input(ctx, 2), optional_input(ctx, 3));
    if (trans_b_) {
      if (bf.rank() != 2) throw_bad_input(ctx.where() + ": transB needs a 2-D B, got " + shape_str(bf.shape()));
      bf = permuted(bf, {1, 0});
    }
    Tensor y = matmul_.run1(ctx, {&af, &bf});
    if (const Tensor* bias = optional_input(ctx, 4)) {
      Tensor biasf = *bias;
      if (!float_out_) {
        const Tensor* bs = optional_input(ctx, 5);
        if (!bs) throw_bad_input(ctx.where() + ": Bias needs BiasScale");
        biasf = dq_bias_.run(ctx, *bias, *bs, nullptr);
      }
      y = add_.run1(ctx, {&y, &biasf});
    }
    if (!float_out_ && residual_) {
      const Tensor* z = optional_input(ctx, 6);
      if (!z) throw_bad_input(ctx.where() + ": conv_scale is set but the residual Z is absent");
      const Tensor t = dq_.run(ctx, quant_.run(ctx, y, conv_, a.dtype()), conv_);
      const Tensor zf = dq_.run(ctx, *z, z_);
      y = add_.run1(ctx, {&t, &zf});
    }
    activate_in_place(y, act_, ctx.where());
    write_output(ctx, 0, float_out_ ? y : quant_.run(ctx, y, y_, a.dtype()));
  }

 private:
  bool float_out_, trans_b_, residual_ = false;
  ActivationSpec act_;
  QParam x_, y_, conv_, z_;
  Dequant dq_, dq_b_, dq_bias_;
  Quant quant_;
  InnerOp matmul_, add_;
};

// The run-time quantization parameters of a dynamically quantized op's input (DynamicQuantizeLinear's
// scale and zero point): one value each.
void require_one_value(KernelContext& ctx, const Tensor& scale, const Tensor* zero, const char* names) {
  if (scale.numel() != 1 || (zero && zero->numel() != 1))
    throw_bad_input(ctx.where() + ": " + names + " must hold one value each, got " + shape_str(scale.shape()) +
                    (zero ? " and " + shape_str(zero->shape()) : std::string()));
}

// MatMulIntegerToFloat: act(Cast<float>(MatMulInteger(A, B, AZero, BZero)) * (AScale * BScale) + Bias),
// the dynamic-quantization group of ORT's quantize_dynamic, op for op (so the fast kernel, which
// multiplies the exact int32 sums by AScale * BScale[n] in float, matches it exactly).
class RefMatMulIntegerToFloat : public Kernel {
 public:
  explicit RefMatMulIntegerToFloat(const KernelInfo& info)
      : act_(activation_of(info.n())), mmi_("MatMulInteger", 4, {}, 1, 10),
        cast_("Cast", 1, {Attribute::make_int("to", 1)}), mul_("Mul", 2), add_("Add", 2) {}

  void compute(KernelContext& ctx) override {
    const Tensor& as = required_input(ctx, 2);
    const Tensor* az = optional_input(ctx, 4);
    require_one_value(ctx, as, az, "AScale and AZero");
    const Tensor* bz = optional_input(ctx, 5);
    const Tensor acc = mmi_.run1(ctx, {&required_input(ctx, 0), &required_input(ctx, 1), az, bz});
    const Tensor accf = cast_.run1(ctx, {&acc});
    const Tensor scale = mul_.run1(ctx, {&as, &required_input(ctx, 3)});
    Tensor y = mul_.run1(ctx, {&accf, &scale});
    if (const Tensor* bias = optional_input(ctx, 6)) y = add_.run1(ctx, {&y, bias});
    activate_in_place(y, act_, ctx.where());
    write_output(ctx, 0, y);
  }

 private:
  ActivationSpec act_;
  InnerOp mmi_, cast_, mul_, add_;
};

// ConvIntegerToFloat: act(Cast<float>(ConvInteger(X, W, XZero, WZero)) * (XScale * WScale) + B), the
// quantize_dynamic group of a Conv op for op; WScale and B (C_out values) broadcast over the output
// channels as the group's reshaped constants do. NhwcConvIntegerToFloat: the same between
// transposes.
class RefConvIntegerToFloat : public Kernel {
 public:
  RefConvIntegerToFloat(const KernelInfo& info, bool nhwc)
      : nhwc_(nhwc), act_(activation_of(info.n())), conv_("ConvInteger", 4, conv_attrs(info.n()), 1, 10),
        cast_("Cast", 1, {Attribute::make_int("to", 1)}), mul_("Mul", 2), add_("Add", 2) {}

  void compute(KernelContext& ctx) override {
    const Tensor& xs = required_input(ctx, 2);
    const Tensor* xz = optional_input(ctx, 4);
    require_one_value(ctx, xs, xz, "XScale and XZero");
    const Tensor& x_in = required_input(ctx, 0);
    if (x_in.rank() < 3) throw_bad_input(ctx.where() + ": X must have rank >= 3, got " + shape_str(x_in.shape()));
    const Tensor x = nhwc_ ? permuted(x_in, to_channels_first(x_in.rank())) : x_in;
    const Tensor acc = conv_.run1(ctx, {&x, &required_input(ctx, 1), xz, optional_input(ctx, 5)});
    const Tensor accf = cast_.run1(ctx, {&acc});
    // A per-channel constant as [C_out, 1, ...] (broadcast against (N, C_out, spatial...)).
    auto per_channel = [&](const Tensor& t, const char* what) {
      if (t.numel() == 1) return t.reshaped({});
      if (t.numel() != acc.dim(1))
        throw_bad_input(ctx.where() + ": " + what + " must hold 1 or " + std::to_string(acc.dim(1)) + " values, got " +
                        shape_str(t.shape()));
      Shape s(static_cast<size_t>(acc.rank() - 1), 1);
      s[0] = acc.dim(1);
      return t.reshaped(s);
    };
    const Tensor ws = per_channel(required_input(ctx, 3), "WScale");
    const Tensor scale = mul_.run1(ctx, {&xs, &ws});
    Tensor y = mul_.run1(ctx, {&accf, &scale});
    if (const Tensor* b = optional_input(ctx, 6)) {
      const Tensor bc = per_channel(*b, "B");
      y = add_.run1(ctx, {&y, &bc});
    }
    activate_in_place(y, act_, ctx.where());
    write_output(ctx, 0, nhwc_ ? permuted(y, to_channels_last(y.rank())) : y);
  }

 private:
  bool nhwc_;
  ActivationSpec act_;
  InnerOp conv_, cast_, mul_, add_;
};

// QAdd / QMul: Q(act(DQ(A) op DQ(B))).
class RefQBinary : public Kernel {
 public:
  RefQBinary(const KernelInfo& info, const char* op) : p_(qbinary_params(info.n())), act_(activation_of(info.n())), op_(op, 2) {}

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    const Tensor af = dq_.run(ctx, a, p_.a), bf = dq_.run(ctx, b, p_.b);
    Tensor y = op_.run1(ctx, {&af, &bf});
    activate_in_place(y, act_, ctx.where());
    write_output(ctx, 0, quant_.run(ctx, y, p_.y, a.dtype()));
  }

 private:
  QBinaryParams p_;
  ActivationSpec act_;
  Dequant dq_;
  Quant quant_;
  InnerOp op_;
};

}  // namespace

// QLookup: Y[i] = Table[X[i]] (+128 for int8 X). Obviously right and already one load per element.
class QLookupKernel : public Kernel {
 public:
  explicit QLookupKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& table = required_input(ctx, 1);
    if (table.numel() != 256) throw_bad_input(ctx.where() + ": Table must hold 256 values, got " + shape_str(table.shape()));
    if ((x.dtype() != DataType::UInt8 && x.dtype() != DataType::Int8) ||
        (table.dtype() != DataType::UInt8 && table.dtype() != DataType::Int8))
      throw_unsupported_dtype(ctx.where(), x.dtype() == DataType::UInt8 || x.dtype() == DataType::Int8 ? table.dtype() : x.dtype());
    Tensor& y = ctx.output(0, x.shape(), table.dtype());
    qlookup(x.data<uint8_t>(), x.dtype() == DataType::Int8, table.data<uint8_t>(), y.data<uint8_t>(), x.numel(),
            &ctx.threads());
  }
};

void register_int8_reference_kernels(KernelRegistry& r) {
  auto add = [&](const char* op, auto make) { r.add(kFusorDomain, op, "reference", 0, make); };
  add("QConv", [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<RefQConv>(i, false); });
  add("NhwcQConv", [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<RefQConv>(i, true); });
  add("QMatMul", [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<RefQMatMul>(i, false); });
  add("QMatMulFloat", [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<RefQMatMul>(i, true); });
  add("MatMulIntegerToFloat", [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<RefMatMulIntegerToFloat>(i); });
  add("ConvIntegerToFloat", [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<RefConvIntegerToFloat>(i, false); });
  add("NhwcConvIntegerToFloat", [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<RefConvIntegerToFloat>(i, true); });
  add("QAdd", [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<RefQBinary>(i, "Add"); });
  add("QMul", [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<RefQBinary>(i, "Mul"); });
  add("QLookup", [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<QLookupKernel>(i); });
}

}  // namespace fusor::int8
