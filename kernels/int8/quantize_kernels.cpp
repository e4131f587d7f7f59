// The fast ONNX QuantizeLinear and DequantizeLinear kernels, for what a QDQ graph keeps unfused:
// float32 <-> uint8/int8, vectorized (kernels/int8/qelementwise.h) and split over the threads.
// QuantizeLinear per tensor with a positive finite scale; DequantizeLinear per tensor or per axis;
// DynamicQuantizeLinear on float input. Every other form (float16, int32, float8, a zero or
// non-finite scale, NaN in DynamicQuantizeLinear's input) runs the reference.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/common/axes.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/int8/qelementwise.h"
#include "kernels/int8/qops.h"
#include "kernels/reference/quant_util.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {
namespace {

constexpr int64_t kChunk = 1 << 15;

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

// DynamicQuantizeLinear: the range [min(0, min x), max(0, max x)] in chunks over the threads, then
// QuantizeLinear's loop with scale = range / 255 and zero point round(-min / scale), computed as
// the reference computes them (same float operations, so the same bytes).
class FastDynamicQuantize : public FastKernel {
 public:
  explicit FastDynamicQuantize(const KernelInfo& info) : FastKernel(info) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (x.dtype() != DataType::Float) return fallback_->compute(ctx);
    const float* px = x.data<float>();
    const int64_t n = x.numel(), chunks = std::max<int64_t>(1, (n + kChunk - 1) / kChunk);
    float lo = 0.0f, hi = 0.0f;
    bool nan = false;
    if (chunks == 1) {
      nan = minmax_run(px, n, lo, hi);
    } else {
      // One (lo, hi, nan) per chunk, combined in order afterwards.
      auto* part = static_cast<float*>(ctx.scratch(static_cast<size_t>(chunks) * 3 * sizeof(float)));
      ctx.threads().parallel_for(chunks, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          float l = 0.0f, h = 0.0f;
          const int64_t b = c * kChunk;
          const bool any = minmax_run(px + b, std::min(kChunk, n - b), l, h);
          part[3 * c] = l, part[3 * c + 1] = h, part[3 * c + 2] = any ? 1.0f : 0.0f;
        }
      }, 1);
      for (int64_t c = 0; c < chunks; ++c) {
        lo = std::min(lo, part[3 * c]);
        hi = std::max(hi, part[3 * c + 1]);
        nan = nan || part[3 * c + 2] != 0.0f;
      }
    }
    const float scale = (hi - lo) / 255.0f;
    if (nan || !std::isfinite(scale)) return fallback_->compute(ctx);
    const uint8_t zp = scale == 0 ? 0 : saturate_round<uint8_t>(-lo / scale);
    Tensor& y = ctx.output(0, x.shape(), DataType::UInt8);
    uint8_t* py = y.data<uint8_t>();
    if (scale == 0) {
      if (n > 0) std::memset(py, zp, static_cast<size_t>(n));  // an empty tensor may have no storage
    } else {
      split(ctx, n, [&](int64_t b, int64_t e) { quantize_run(px + b, scale, zp, false, py + b, e - b); });
    }
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) *ctx.output(1, {}, DataType::Float).data<float>() = scale;
    if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) *ctx.output(2, {}, DataType::UInt8).data<uint8_t>() = zp;
  }
};

}  // namespace

void register_int8_quantize_kernels(KernelRegistry& r) {
  r.add("", "QuantizeLinear", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastQuantize>(i); });
  r.add("", "DequantizeLinear", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastDequantize>(i); });
  r.add("", "DynamicQuantizeLinear", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastDynamicQuantize>(i); });
}

}  // namespace fusor::int8
