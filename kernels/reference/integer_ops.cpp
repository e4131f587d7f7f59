// Reference MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv. Operands are widened to
// int32 with their zero points subtracted, multiplied and summed exactly (int64 accumulators,
// stored as int32 as ONNX specifies), then requantized where the op asks for it.
#include <algorithm>

#include "kernels/common/conv_params.h"
#include "kernels/common/kernel_util.h"
#include "kernels/common/matmul_shape.h"
#include "kernels/reference/conv_ref.h"
#include "kernels/reference/nn_families.h"
#include "kernels/reference/quant_util.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

void check_8bit(const Tensor& t, const char* what, const std::string& where) {
  if (t.dtype() != DataType::UInt8 && t.dtype() != DataType::Int8)
    throw_bad_input(where + ": " + what + " must be uint8 or int8, got " + dtype_name(t.dtype()));
}

// Widens t into `out` minus its zero point. The zero point is a scalar, or has `groups` values
// where element i uses (i / inner) % groups (per row, per column or per output channel).
void widen(const Tensor& t, const Tensor* zp, int64_t inner, int64_t groups, int32_t* out, const char* what,
           const std::string& where) {
  if (zp && zp->dtype() != t.dtype()) throw_bad_input(where + ": " + what + " zero point type differs from its tensor's");
  const bool per = zp && zp->numel() != 1;
  if (per && zp->numel() != groups)
    throw_bad_input(where + ": " + what + " zero point has " + std::to_string(zp->numel()) + " values, expected 1 or " +
                    std::to_string(groups));
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t z = !zp ? 0 : zp->as_int64(per ? (i / inner) % groups : 0);
    out[i] = static_cast<int32_t>(t.as_int64(i) - z);
  }
}

// Exact int32 batched matmul of widened operands.
void matmul_i32(const MatMulShape& s, const int32_t* a, const int32_t* b, int32_t* y, ThreadPool& pool) {
  pool.parallel_for(s.batch_count() * s.M, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t bi = r / s.M, m = r % s.M;
      const int32_t* ar = a + (s.a_matrix(bi) * s.M + m) * s.K;
      const int32_t* bm = b + s.b_matrix(bi) * s.K * s.N;
      for (int64_t n = 0; n < s.N; ++n) {
        int64_t acc = 0;
        for (int64_t k = 0; k < s.K; ++k) acc += static_cast<int64_t>(ar[k]) * bm[k * s.N + n];
        y[r * s.N + n] = static_cast<int32_t>(acc);
      }
    }
  });
}

// Validated operands of an integer matmul, widened into scratch: A with a per-tensor or per-row
// zero point, B with a per-tensor or per-column one.
struct WidenedMatMul {
  MatMulShape shape;
  int32_t* a = nullptr;
  int32_t* b = nullptr;
};

WidenedMatMul widen_matmul(KernelContext& ctx, const Tensor& a, const Tensor* azp, const Tensor& b, const Tensor* bzp) {
  const std::string where = ctx.where();
  check_8bit(a, "A", where);
  check_8bit(b, "B", where);
  WidenedMatMul w;
  w.shape = matmul_shape(a.shape(), b.shape(), where);
  w.a = static_cast<int32_t*>(ctx.scratch(sizeof(int32_t) * std::max<int64_t>(1, a.numel())));
  w.b = static_cast<int32_t*>(ctx.scratch(sizeof(int32_t) * std::max<int64_t>(1, b.numel())));
  widen(a, azp, w.shape.K, w.shape.M, w.a, "A", where);
  widen(b, bzp, 1, w.shape.N, w.b, "B", where);
  return w;
}

class MatMulIntegerKernel : public Kernel {
 public:
  explicit MatMulIntegerKernel(const KernelInfo&) {}
  void compute(KernelContext& ctx) override {
    const WidenedMatMul w = widen_matmul(ctx, required_input(ctx, 0), optional_input(ctx, 2), required_input(ctx, 1),
                                         optional_input(ctx, 3));
    Tensor& y = ctx.output(0, w.shape.out, DataType::Int32);
    matmul_i32(w.shape, w.a, w.b, y.data<int32_t>(), ctx.threads());
  }
};

// Per-tensor or per-`groups` scale value for element group g.
double scale_at(const Tensor& s, int64_t g) { return s.numel() == 1 ? s.as_double(0) : s.as_double(g); }

// QLinearMatMul: y = saturate(round(acc * a_scale * b_scale / y_scale) + y_zero_point), where
// a_scale may be per row and b_scale per column.
class QLinearMatMulKernel : public Kernel {
 public:
  explicit QLinearMatMulKernel(const KernelInfo& info) : where_(info.where()) {}
  void compute(KernelContext& ctx) override {
    const Tensor& a_scale = required_input(ctx, 1);
    const Tensor& b_scale = required_input(ctx, 4);
    const Tensor& y_scale = required_input(ctx, 6);
    const Tensor* y_zp = optional_input(ctx, 7);
    const WidenedMatMul w = widen_matmul(ctx, required_input(ctx, 0), optional_input(ctx, 2), required_input(ctx, 3),
                                         optional_input(ctx, 5));
    const MatMulShape& s = w.shape;
    int32_t* acc = static_cast<int32_t*>(ctx.scratch(sizeof(int32_t) * std::max<int64_t>(1, shape_numel(s.out))));
    matmul_i32(s, w.a, w.b, acc, ctx.threads());
    if (y_scale.numel() != 1) throw_bad_input(where_ + ": y_scale must be a scalar");
    const DataType out_type = y_zp ? y_zp->dtype() : required_input(ctx, 0).dtype();
    Tensor& y = ctx.output(0, s.out, out_type);
    const int64_t total = shape_numel(s.out);
    const double ys = y_scale.as_double(0);
    const double yz = y_zp ? y_zp->as_double(0) : 0.0;
    dispatch_quantized(out_type, where_, [&](auto tag) {
      using Q = typename decltype(tag)::type;
      for (int64_t i = 0; i < total; ++i) {
        const int64_t n = i % s.N, m = (i / s.N) % s.M;
        const double real = static_cast<double>(acc[i]) * scale_at(a_scale, m) * scale_at(b_scale, n) / ys;
        y.data<Q>()[i] = quantize_round<Q>(real, yz);
      }
    });
  }

 private:
  std::string where_;
};

// Shared by ConvInteger and QLinearConv: exact int32 convolution of zero-point-shifted operands.
// x_zero_point is per tensor; w_zero_point per tensor or per output channel.
void integer_conv(KernelContext& ctx, const WindowAttrs& attrs, const Tensor& x, const Tensor* xzp, const Tensor& w,
                  const Tensor* wzp, const ConvParams& p, int32_t* y) {
  check_8bit(x, "x", attrs.where);
  check_8bit(w, "w", attrs.where);
  if (xzp && xzp->numel() != 1) throw_bad_input(attrs.where + ": x_zero_point must be a scalar");
  int32_t* wx = static_cast<int32_t*>(ctx.scratch(sizeof(int32_t) * std::max<int64_t>(1, x.numel())));
  int32_t* ww = static_cast<int32_t*>(ctx.scratch(sizeof(int32_t) * std::max<int64_t>(1, w.numel())));
  widen(x, xzp, 1, 1, wx, "x", attrs.where);
  widen(w, wzp, w.numel() / std::max<int64_t>(1, p.out_channels), p.out_channels, ww, "w", attrs.where);
  auto id = [](int32_t v) { return v; };
  conv_forward_ref<int64_t>(p, wx, ww, y, id, id, ctx.threads());
}

class ConvIntegerKernel : public Kernel {
 public:
  explicit ConvIntegerKernel(const KernelInfo& info) : attrs_(WindowAttrs::parse(info.n(), WindowKind::Conv)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& w = required_input(ctx, 1);
    const ConvParams p = conv_params(attrs_, x.shape(), w.shape());
    Tensor& y = ctx.output(0, p.output_shape(), DataType::Int32);
    integer_conv(ctx, attrs_, x, optional_input(ctx, 2), w, optional_input(ctx, 3), p, y.data<int32_t>());
  }

 private:
  WindowAttrs attrs_;
};

// QLinearConv: y = saturate(round((acc + B[m]) * x_scale * w_scale[m] / y_scale) + y_zero_point).
class QLinearConvKernel : public Kernel {
 public:
  explicit QLinearConvKernel(const KernelInfo& info) : attrs_(WindowAttrs::parse(info.n(), WindowKind::Conv)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& x_scale = required_input(ctx, 1);
    const Tensor& w = required_input(ctx, 3);
    const Tensor& w_scale = required_input(ctx, 4);
    const Tensor& y_scale = required_input(ctx, 6);
    const Tensor* y_zp = optional_input(ctx, 7);
    const Tensor* bias = optional_input(ctx, 8);
    const ConvParams p = conv_params(attrs_, x.shape(), w.shape());
    if (x_scale.numel() != 1 || y_scale.numel() != 1) throw_bad_input(attrs_.where + ": x_scale and y_scale must be scalars");
    if (w_scale.numel() != 1 && w_scale.numel() != p.out_channels)
      throw_bad_input(attrs_.where + ": w_scale must be a scalar or have one value per output channel");
    if (bias && (bias->dtype() != DataType::Int32 || bias->numel() != p.out_channels))
      throw_bad_input(attrs_.where + ": B must be int32 with one value per output channel");
    const Shape out = p.output_shape();
    int32_t* acc = static_cast<int32_t*>(ctx.scratch(sizeof(int32_t) * std::max<int64_t>(1, shape_numel(out))));
    integer_conv(ctx, attrs_, x, optional_input(ctx, 2), w, optional_input(ctx, 5), p, acc);
    const DataType out_type = y_zp ? y_zp->dtype() : x.dtype();
    Tensor& y = ctx.output(0, out, out_type);
    const int64_t os = p.out_spatial_size();
    const double xs = x_scale.as_double(0), ys = y_scale.as_double(0), yz = y_zp ? y_zp->as_double(0) : 0.0;
    dispatch_quantized(out_type, attrs_.where, [&](auto tag) {
      using Q = typename decltype(tag)::type;
      for (int64_t i = 0; i < shape_numel(out); ++i) {
        const int64_t m = (i / os) % p.out_channels;
        const double v = static_cast<double>(static_cast<int64_t>(acc[i]) + (bias ? bias->as_int64(m) : 0));
        y.data<Q>()[i] = quantize_round<Q>(v * xs * scale_at(w_scale, m) / ys, yz);
      }
    });
  }

 private:
  WindowAttrs attrs_;
};

}  // namespace

void register_misc_integer_kernels(KernelRegistry& r) {
  add_reference_kernel<MatMulIntegerKernel>(r, "MatMulInteger");
  add_reference_kernel<QLinearMatMulKernel>(r, "QLinearMatMul");
  add_reference_kernel<ConvIntegerKernel>(r, "ConvInteger");
  add_reference_kernel<QLinearConvKernel>(r, "QLinearConv");
}

}  // namespace fusor
