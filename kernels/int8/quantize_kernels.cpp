// The fast ONNX QuantizeLinear and DequantizeLinear kernels, for what a QDQ graph keeps unfused:
// float32 <-> uint8/int8, vectorized (kernels/int8/qelementwise.h) and split over the threads.
// QuantizeLinear per tensor with a positive finite scale; DequantizeLinear per tensor or per axis.
// Every other form (float16, int32, float8, a zero or non-finite scale) runs the reference.
#include <cmath>

#include "kernels/common/axes.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/int8/qelementwise.h"
#include "kernels/int8/qops.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {
namespace {

constexpr int64_t kChunk = 1 << 15;

bool is_8bit(DataType t) { return t == DataType::UInt8 || t == DataType::Int8; }

template <class F>
void split(KernelContext& ctx, int64_t n, F&& body) {
  if (n >= 2 * kChunk) {
    ctx.threads().parallel_for(n, body, kChunk);
  } else {
    body(0, n);
  }
}

class FastQuantize : public FastKernel {
 public:
  // Opset 21's output_dtype chooses the type without a zero point: the reference handles it.
  explicit FastQuantize(const KernelInfo& info) : FastKernel(info), plain_(!info.n().attr("output_dtype")) {}

  void compute(KernelContext& ctx) override {
    if (!plain_) return fallback_->compute(ctx);
    const Tensor& x = required_input(ctx, 0);
    const Tensor& s = required_input(ctx, 1);
    const Tensor* z = optional_input(ctx, 2);
    if (x.dtype() != DataType::Float || s.dtype() != DataType::Float || s.numel() != 1 || s.rank() > 1 ||
        (z && (!is_8bit(z->dtype()) || z->numel() != 1)))
      return fallback_->compute(ctx);
    const float scale = s.data<float>()[0];
    if (!(scale > 0.0f) || !std::isfinite(scale)) return fallback_->compute(ctx);
    const DataType out = z ? z->dtype() : DataType::UInt8;
    const int32_t zp = z ? static_cast<int32_t>(z->as_int64(0)) : 0;
    Tensor& y = ctx.output(0, x.shape(), out);
    const float* px = x.data<float>();
    uint8_t* py = y.data<uint8_t>();
    split(ctx, x.numel(), [&](int64_t b, int64_t e) { quantize_run(px + b, scale, zp, out == DataType::Int8, py + b, e - b); });
  }

 private:
  bool plain_;
};

class FastDequantize : public FastKernel {
 public:
  explicit FastDequantize(const KernelInfo& info) : FastKernel(info), axis_(info.n().attr_int("axis", 1)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& s = required_input(ctx, 1);
    const Tensor* z = optional_input(ctx, 2);
    if (!is_8bit(x.dtype()) || s.dtype() != DataType::Float || (z && z->dtype() != x.dtype()) ||
        (z && z->numel() != s.numel()) || s.rank() > 1)
      return fallback_->compute(ctx);
    const bool sgn = x.dtype() == DataType::Int8;
    Tensor& y = ctx.output(0, x.shape(), DataType::Float);
    const uint8_t* px = x.data<uint8_t>();
    float* py = y.data<float>();
    const float* ps = s.data<float>();
    auto zp = [&](int64_t i) { return z ? static_cast<int32_t>(z->as_int64(i)) : 0; };
    if (s.numel() == 1) {
      const float scale = ps[0];
      const int32_t z0 = zp(0);
      return split(ctx, x.numel(), [&](int64_t b, int64_t e) { dequantize_run(px + b, sgn, scale, z0, py + b, e - b); });
    }
    if (x.rank() == 0) return fallback_->compute(ctx);
    const int64_t axis = normalize_axis(axis_, x.rank(), ctx.where());
    if (s.dim(0) != x.dim(static_cast<int>(axis))) return fallback_->compute(ctx);
    // Runs of `inner` elements share one parameter: (outer, channel) rows.
    const int64_t count = s.dim(0), inner = dims_product(x.shape(), axis + 1, x.rank());
    const int64_t rows = x.numel() / std::max<int64_t>(inner, 1);
    auto body = [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t c = r % count;
        dequantize_run(px + r * inner, sgn, ps[c], zp(c), py + r * inner, inner);
      }
    };
    const int64_t grain = std::max<int64_t>(1, kChunk / std::max<int64_t>(inner, 1));
    if (rows > 2 * grain) {
      ctx.threads().parallel_for(rows, body, grain);
    } else {
      body(0, rows);
    }
  }

 private:
  int64_t axis_;
};

}  // namespace

void register_int8_quantize_kernels(KernelRegistry& r) {
  r.add("", "QuantizeLinear", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastQuantize>(i); });
  r.add("", "DequantizeLinear", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastDequantize>(i); });
}

}  // namespace fusor::int8
