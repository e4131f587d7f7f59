// MaxPool on 8-bit data (what a QDQ graph's MaxPool becomes: the max of quantized values is the
// quantized max), 2-D, NCHW (ONNX MaxPool) and NHWC (fusor.NhwcMaxPool): registered above the
// float fast kernels ("int8", priority 11), handing every float call to them and N-d pools or
// the Indices output to the reference. Windows without a tap inside X give the type's lowest value
// (the reference's -infinity, quantized).
#include <algorithm>
#include <cstring>

#include "kernels/common/conv_params.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/cpu_features.h"
#include "kernels/int8/qpool.h"
#include "kernels/pool/pool2d.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {
namespace {

// One NHWC output row (all its pixels, all channels).
void maxpool_row_nhwc_scalar(const Pool2d& g, const uint8_t* x, uint8_t* y, int64_t n, int64_t oh, bool sgn) {
  const uint8_t flip = sgn ? 0x80 : 0x00;  // signed max through unsigned compare of flipped bytes
  for (int64_t ow = 0; ow < g.OW; ++ow) {
    uint8_t* out = y + ((n * g.OH + oh) * g.OW + ow) * g.C;
    std::memset(out, 0, static_cast<size_t>(g.C));
    for_each_nhwc_tap(g, x, n, oh, ow, [&](const uint8_t* in) {
      for (int64_t c = 0; c < g.C; ++c) out[c] = std::max<uint8_t>(out[c], in[c] ^ flip);
    });
    if (flip)
      for (int64_t c = 0; c < g.C; ++c) out[c] ^= flip;
  }
}

void maxpool_nhwc(const Pool2d& g, const uint8_t* x, uint8_t* y, bool sgn, ThreadPool& pool) {
  const Isa isa = active_isa();
  auto body = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      if (isa == Isa::Avx512) {
        maxpool_row_nhwc_avx512(g, x, y, r / g.OH, r % g.OH, sgn);
      } else if (isa == Isa::Avx2) {
        maxpool_row_nhwc_avx2(g, x, y, r / g.OH, r % g.OH, sgn);
      } else {
        maxpool_row_nhwc_scalar(g, x, y, r / g.OH, r % g.OH, sgn);
      }
    }
  };
  const int64_t rows = g.N * g.OH, grain = std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, g.OW * g.C * g.kh * g.kw));
  if (rows > grain) {
    pool.parallel_for(rows, body, grain);
  } else {
    body(0, rows);
  }
}

void maxpool_nchw(const Pool2d& g, const uint8_t* x, uint8_t* y, bool sgn) {
  const int lowest = sgn ? -128 : 0;
  for (int64_t nc = 0; nc < g.N * g.C; ++nc)
    for (int64_t oh = 0; oh < g.OH; ++oh)
      for (int64_t ow = 0; ow < g.OW; ++ow) {
        int best = lowest;
        for_each_tap(g, oh, ow, [&](int64_t ih, int64_t iw) {
          const uint8_t v = x[(nc * g.H + ih) * g.W + iw];
          best = std::max(best, sgn ? static_cast<int>(static_cast<int8_t>(v)) : static_cast<int>(v));
        });
        y[(nc * g.OH + oh) * g.OW + ow] = static_cast<uint8_t>(best);
      }
}

template <bool kNhwc>
class MaxPool8 : public Kernel {
 public:
  explicit MaxPool8(const KernelInfo& info) : attrs_(WindowAttrs::parse(info.n(), WindowKind::Pool)), fallback_(make_reference(info)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const bool indices = ctx.num_outputs() > 1 && ctx.output_wanted(1);
    if ((x.dtype() != DataType::UInt8 && x.dtype() != DataType::Int8) || x.rank() != 4 || indices)
      return fallback_->compute(ctx);
    const Shape& s = x.shape();
    const ConvParams p = pool_params(attrs_, kNhwc ? Shape{s[0], s[3], s[1], s[2]} : s);
    const Pool2d g = Pool2d::from(p, PoolMode::Max, false);
    const Shape out = kNhwc ? Shape{g.N, g.OH, g.OW, g.C} : Shape{g.N, g.C, g.OH, g.OW};
    Tensor& y = ctx.output(0, out, x.dtype());
    const bool sgn = x.dtype() == DataType::Int8;
    if (kNhwc) {
      maxpool_nhwc(g, x.data<uint8_t>(), y.data<uint8_t>(), sgn, ctx.threads());
    } else {
      maxpool_nchw(g, x.data<uint8_t>(), y.data<uint8_t>(), sgn);
    }
  }

 private:
  WindowAttrs attrs_;
  std::unique_ptr<Kernel> fallback_;
};

bool known_8bit(const KernelInfo& info) {
  const ValueType* t = info.input_types.empty() ? nullptr : info.input_types[0];
  return t && (t->elem == DataType::UInt8 || t->elem == DataType::Int8);
}

}  // namespace

void register_int8_pool_kernels(KernelRegistry& r) {
  r.add("", "MaxPool", "int8", kFastPriority + 1, [](const KernelInfo& i) -> std::unique_ptr<Kernel> {
    if (known_8bit(i)) return std::make_unique<MaxPool8<false>>(i);
    return KernelRegistry::global().create(i, "fast");
  }, 12);
  r.add(kFusorDomain, "NhwcMaxPool", "int8", kFastPriority + 1, [](const KernelInfo& i) -> std::unique_ptr<Kernel> {
    if (known_8bit(i)) return std::make_unique<MaxPool8<true>>(i);
    return KernelRegistry::global().create(i, "fast");
  });
}

}  // namespace fusor::int8
