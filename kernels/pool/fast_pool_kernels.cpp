// The "fast" (priority 10) 2-D MaxPool / AveragePool kernels (ONNX, NCHW) and NhwcMaxPool /
// NhwcAveragePool (fusor domain, NHWC) on pool2d. Float and 2-D only: any other case (N-d, other
// element types, MaxPool's Indices output) goes to the reference kernel created alongside.
// NhwcGlobalAveragePool (float, any rank >= 3): per image, the pixels' channel rows summed in
// float in pixel order, then divided by the pixel count (the reference sums in double).
#include <algorithm>

#include "kernels/common/conv_params.h"
#include "kernels/common/kernel_util.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/kernel.h"
#include "kernels/pool/pool2d.h"
#include "kernels/register.h"

namespace fusor {

namespace {

template <PoolMode kMode, bool kNhwc>
class FastPool2d : public FastKernel {
 public:
  explicit FastPool2d(const KernelInfo& info)
      : FastKernel(info),
        attrs_(WindowAttrs::parse(info.n(), WindowKind::Pool)),
        count_include_pad_(info.n().attr_int("count_include_pad", 0) != 0) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const bool indices = ctx.num_outputs() > 1 && ctx.output_wanted(1);
    if (x.dtype() != DataType::Float || x.rank() != 4 || indices) return fallback_->compute(ctx);
    const Shape& s = x.shape();
    const ConvParams p = pool_params(attrs_, kNhwc ? Shape{s[0], s[3], s[1], s[2]} : s);
    const Pool2d g = Pool2d::from(p, kMode, count_include_pad_);
    const Shape out = kNhwc ? Shape{g.N, g.OH, g.OW, g.C} : Shape{g.N, g.C, g.OH, g.OW};
    Tensor& y = ctx.output(0, out, DataType::Float);
    if (kNhwc) pool2d_nhwc(g, x.data<float>(), y.data<float>(), ctx.threads());
    else pool2d_nchw(g, x.data<float>(), y.data<float>(), ctx.threads());
  }

 private:
  WindowAttrs attrs_;
  bool count_include_pad_;
};

class FastNhwcGlobalAveragePool : public FastKernel {
 public:
  explicit FastNhwcGlobalAveragePool(const KernelInfo& info) : FastKernel(info) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (x.dtype() != DataType::Float || x.rank() < 3) return fallback_->compute(ctx);
    const int r = x.rank();
    const int64_t N = x.dim(0), C = x.dim(r - 1), P = x.numel() / std::max<int64_t>(1, N * C);
    Shape out(static_cast<size_t>(r), 1);
    out[0] = N;
    out[static_cast<size_t>(r - 1)] = C;
    Tensor& y = ctx.output(0, out, DataType::Float);
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    for (int64_t n = 0; n < N; ++n) {
      float* acc = yp + n * C;
      std::fill(acc, acc + C, 0.0f);
      for (int64_t p = 0; p < P; ++p) {
        const float* row = xp + (n * P + p) * C;
        for (int64_t c = 0; c < C; ++c) acc[c] += row[c];
      }
      const float count = static_cast<float>(P);
      for (int64_t c = 0; c < C; ++c) acc[c] /= count;
    }
  }
};

}  // namespace

void register_fast_pool_kernels(KernelRegistry& r) {
  add_fast_kernel<FastPool2d<PoolMode::Max, false>>(r, "", "MaxPool");
  add_fast_kernel<FastPool2d<PoolMode::Average, false>>(r, "", "AveragePool");
  add_fast_kernel<FastPool2d<PoolMode::Max, true>>(r, kFusorDomain, "NhwcMaxPool");
  add_fast_kernel<FastPool2d<PoolMode::Average, true>>(r, kFusorDomain, "NhwcAveragePool");
  add_fast_kernel<FastNhwcGlobalAveragePool>(r, kFusorDomain, "NhwcGlobalAveragePool");
}

}  // namespace fusor
