// Reference QuantizeLinear, DequantizeLinear (per-tensor and per-axis, int8/uint8/int32) and
// DynamicQuantizeLinear. Rounding is to nearest, ties to even, as ONNX specifies.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/common/axes.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/nn_families.h"
#include "kernels/reference/quant_util.h"

namespace fusor {

namespace {

// Scale / zero point are either scalars (one element) or 1-D over `axis`. Returns the element
// stride pattern: element i uses parameter (i / inner) % count.
struct QuantParams {
  int64_t count = 1, inner = 1;
  int64_t index(int64_t i) const { return count == 1 ? 0 : (i / inner) % count; }
};

QuantParams quant_params(const Tensor& x, const Tensor& scale, const Tensor* zp, int64_t axis_attr, const std::string& where) {
  QuantParams q;
  if (scale.numel() == 1 && scale.rank() <= 1) {
    if (zp && zp->numel() != 1) throw_bad_input(where + ": zero point must match the scalar scale");
    return q;
  }
  if (scale.rank() != 1) throw_bad_input(where + ": scale must be a scalar or 1-D, got " + shape_str(scale.shape()));
  const int64_t axis = normalize_axis(axis_attr, x.rank(), where);
  if (scale.dim(0) != x.dim(axis))
    throw_bad_input(where + ": per-axis scale has " + std::to_string(scale.dim(0)) + " values but axis " + std::to_string(axis) +
                    " has " + std::to_string(x.dim(axis)));
  if (zp && zp->shape() != scale.shape()) throw_bad_input(where + ": zero point shape differs from the scale's");
  q.count = scale.dim(0);
  q.inner = dims_product(x.shape(), axis + 1, x.rank());
  return q;
}

class QuantizeLinearKernel : public Kernel {
 public:
  explicit QuantizeLinearKernel(const KernelInfo& info) : where_(info.where()), axis_(info.n().attr_int("axis", 1)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& scale = required_input(ctx, 1);
    const Tensor* zp = optional_input(ctx, 2);
    const QuantParams q = quant_params(x, scale, zp, axis_, where_);
    const DataType out_type = zp ? zp->dtype() : DataType::UInt8;
    Tensor& y = ctx.output(0, x.shape(), out_type);
    dispatch_quantized(out_type, where_, [&](auto tag) {
      using Q = typename decltype(tag)::type;
      Q* py = y.data<Q>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t p = q.index(i);
        const double s = scale.as_double(p);
        const double z = zp ? zp->as_double(p) : 0.0;
        py[i] = quantize_round<Q>(static_cast<float>(x.as_double(i)) / static_cast<float>(s), z);
      }
    });
  }

 private:
  std::string where_;
  int64_t axis_;
};

class DequantizeLinearKernel : public Kernel {
 public:
  explicit DequantizeLinearKernel(const KernelInfo& info) : where_(info.where()), axis_(info.n().attr_int("axis", 1)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& scale = required_input(ctx, 1);
    const Tensor* zp = optional_input(ctx, 2);
    if (zp && zp->dtype() != x.dtype()) throw_bad_input(where_ + ": zero point type differs from x's");
    if (x.dtype() != DataType::UInt8 && x.dtype() != DataType::Int8 && x.dtype() != DataType::Int32)
      throw_unsupported_dtype(where_, x.dtype());
    const QuantParams q = quant_params(x, scale, zp, axis_, where_);
    Tensor& y = ctx.output(0, x.shape(), scale.dtype());
    dispatch_float(scale.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t p = q.index(i);
        const int64_t z = zp ? zp->as_int64(p) : 0;
        py[i] = static_cast<T>(static_cast<T>(x.as_int64(i) - z) * static_cast<T>(scale.as_double(p)));
      }
    });
  }

 private:
  std::string where_;
  int64_t axis_;
};

// y_scale = (max(0, max x) - min(0, min x)) / 255, y_zero_point = round(-min / scale) clamped to
// [0, 255], y = saturate(round(x / y_scale) + y_zero_point). Rounding happens before the zero
// point is added: ties are decided on x / scale.
class DynamicQuantizeLinearKernel : public Kernel {
 public:
  explicit DynamicQuantizeLinearKernel(const KernelInfo& info) : where_(info.where()) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (x.dtype() != DataType::Float) throw_unsupported_dtype(where_, x.dtype());
    const float* px = x.data<float>();
    float lo = 0, hi = 0;
    for (int64_t i = 0; i < x.numel(); ++i) {
      lo = std::min(lo, px[i]);
      hi = std::max(hi, px[i]);
    }
    const float scale = (hi - lo) / 255.0f;
    const uint8_t zp = scale == 0 ? 0 : saturate_round<uint8_t>(-lo / scale);
    Tensor& y = ctx.output(0, x.shape(), DataType::UInt8);
    for (int64_t i = 0; i < x.numel(); ++i)
      y.data<uint8_t>()[i] = scale == 0 ? zp : saturate_round<uint8_t>(std::nearbyint(px[i] / scale) + zp);
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) *ctx.output(1, {}, DataType::Float).data<float>() = scale;
    if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) *ctx.output(2, {}, DataType::UInt8).data<uint8_t>() = zp;
  }

 private:
  std::string where_;
};

}  // namespace

void register_misc_quant_kernels(KernelRegistry& r) {
  add_reference_kernel<QuantizeLinearKernel>(r, "QuantizeLinear");
  add_reference_kernel<DequantizeLinearKernel>(r, "DequantizeLinear");
  add_reference_kernel<DynamicQuantizeLinearKernel>(r, "DynamicQuantizeLinear");
}

}  // namespace fusor
