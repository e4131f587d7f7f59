// The fast QAdd / QMul kernels: ONNX broadcasting walked row by row (kernels/common/broadcast.h),
// each row by the vector loop of kernels/int8/qelementwise.h, rows split over the threads.
#include <algorithm>

#include "kernels/common/broadcast.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/int8/qelementwise.h"
#include "kernels/int8/qops.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {
namespace {

class FastQBinary : public Kernel {
 public:
  FastQBinary(const KernelInfo& info, bool mul) {
    const QBinaryParams p = qbinary_params(info.n());
    q_.mul = mul;
    q_.ka = p.a.scale / p.y.scale;
    q_.kb = p.b.scale / p.y.scale;
    q_.c = static_cast<float>(p.y.zero_point) - static_cast<float>(p.a.zero_point) * q_.ka -
           static_cast<float>(p.b.zero_point) * q_.kb;
    q_.k = p.a.scale * p.b.scale / p.y.scale;
    q_.za = static_cast<float>(p.a.zero_point);
    q_.zb = static_cast<float>(p.b.zero_point);
    q_.zy = static_cast<float>(p.y.zero_point);
    act_lo_ = p.act_lo;
    act_hi_ = p.act_hi;
    y_ = p.y;
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = required_input(ctx, 0);
    const Tensor& b = required_input(ctx, 1);
    if (a.dtype() != b.dtype() || (a.dtype() != DataType::UInt8 && a.dtype() != DataType::Int8))
      throw_bad_input(ctx.where() + ": A and B must both be uint8 or both int8");
    QBinaryConsts q = q_;
    q.is_signed = a.dtype() == DataType::Int8;
    const float tlo = q.is_signed ? -128.0f : 0.0f, thi = q.is_signed ? 127.0f : 255.0f;
    auto bound = [&](float v, float dflt) {
      if (v <= -1.0e38f || v >= 1.0e38f) return dflt;
      return std::clamp(std::nearbyint(v / y_.scale) + static_cast<float>(y_.zero_point), tlo, thi);
    };
    q.lo = bound(act_lo_, tlo);
    q.hi = std::max(q.lo, bound(act_hi_, thi));
    const Shape out = broadcast_shapes({a.shape(), b.shape()}, ctx.where());
    Tensor& y = ctx.output(0, out, a.dtype());
    const uint8_t *pa = a.data<uint8_t>(), *pb = b.data<uint8_t>();
    uint8_t* py = y.data<uint8_t>();
    const int64_t n = y.numel();
    if (n == 0) return;
    if (a.shape() == out && b.shape() == out) {
      auto body = [&](int64_t i0, int64_t i1) { qbinary_run(q, pa + i0, 1, pb + i0, 1, py + i0, i1 - i0); };
      return split(ctx, n, body);
    }
    BroadcastIndex base(out, {a.shape(), b.shape()});
    const int64_t len = base.row_length(), rows = base.num_rows();
    const int64_t sa = base.row_stride(0), sb = base.row_stride(1);
    auto body = [&](int64_t r0, int64_t r1) {
      BroadcastIndex it(out, {a.shape(), b.shape()});
      it.seek_row(r0);
      for (int64_t r = r0; r < r1; ++r, it.next_row())
        qbinary_run(q, pa + it.offset(0), sa, pb + it.offset(1), sb, py + r * len, len);
    };
    const int64_t grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(len, 1));
    if (rows > grain) {
      ctx.threads().parallel_for(rows, body, grain);
    } else {
      body(0, rows);
    }
  }

 private:
  template <class F>
  static void split(KernelContext& ctx, int64_t n, F&& body) {
    if (n >= (1 << 16)) {
      ctx.threads().parallel_for(n, body, 1 << 15);
    } else {
      body(0, n);
    }
  }

  QBinaryConsts q_;
  float act_lo_, act_hi_;
  QParam y_;
};

}  // namespace

void register_int8_binary_kernels(KernelRegistry& r) {
  r.add(kFusorDomain, "QAdd", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastQBinary>(i, false); });
  r.add(kFusorDomain, "QMul", "fast", kFastPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<FastQBinary>(i, true); });
}

}  // namespace fusor::int8
