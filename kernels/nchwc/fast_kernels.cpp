// The fast kernels of the blocked-layout ops: reorders (kernels/nchwc/reorder.h), the direct
// blocked convolution (kernels/nchwc/conv.h), the per-channel affine map (kernels/nchwc/affine.h),
// pools (a blocked image is an NHWC image of B channels per channel block: kernels/pool/pool2d.h's
// NHWC loops) and global pools. Float only;
// anything else goes to the reference kernel.
#include <algorithm>
#include <limits>
#include <optional>

#include "kernels/common/conv_params.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/fused/activation.h"
#include "kernels/nchwc/affine.h"
#include "kernels/nchwc/conv.h"
#include "kernels/nchwc/nchwc_format.h"
#include "kernels/nchwc/nchwc_kernels.h"
#include "kernels/nchwc/reorder.h"
#include "kernels/pool/pool2d.h"
#include "kernels/register.h"
#include "kernels/thread_pool.h"

namespace fusor::nchwc {
namespace {

bool blocked_float(const Tensor& x) { return x.dtype() == DataType::Float && x.rank() == 5 && (x.dim(4) == 8 || x.dim(4) == 16); }

class FastReorderTo : public FastKernel {
 public:
  explicit FastReorderTo(const KernelInfo& info) : FastKernel(info), block_(info.n().attr_int("block", kNchwcBlock)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (x.dtype() != DataType::Float || x.rank() != 4 || (block_ != 8 && block_ != 16)) return fallback_->compute(ctx);
    const NchwcShape s{x.dim(0), x.dim(1), x.dim(2), x.dim(3), block_};
    Tensor& y = ctx.output(0, Shape{s.n, s.cb(), s.h, s.w, s.block}, DataType::Float);
    reorder_to_nchwc(x.data<float>(), s, y.data<float>(), &ctx.threads());
  }

 private:
  int64_t block_;
};

class FastReorderFrom : public FastKernel {
 public:
  explicit FastReorderFrom(const KernelInfo& info) : FastKernel(info), channels_(info.n().attr_int("channels", 0)) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (!blocked_float(x) || channels_ <= 0 || nchwc_blocks(channels_, x.dim(4)) != x.dim(1))
      return fallback_->compute(ctx);
    const NchwcShape s{x.dim(0), channels_, x.dim(2), x.dim(3), x.dim(4)};
    Tensor& y = ctx.output(0, Shape{s.n, s.c, s.h, s.w}, DataType::Float);
    reorder_from_nchwc(x.data<float>(), s, y.data<float>(), &ctx.threads());
  }

 private:
  int64_t channels_;
};

class FastConv : public FastKernel {
 public:
  explicit FastConv(const KernelInfo& info)
      : FastKernel(info),
        attrs_(WindowAttrs::parse(info.n(), WindowKind::Conv)),
        act_(fused::activation_of(info.n())),
        block_(info.n().attr_int("block", kNchwcBlock)) {
    const Tensor* w = const_float(info, 1);
    const ValueType* xt = info.input_types.empty() ? nullptr : info.input_types[0];
    if (w && w->rank() == 4 && xt && xt->has_shape && attrs_.group > 0 && w->dim(0) % attrs_.group == 0 &&
        (xt->dims.size() == 5 || attrs_.group == 1))
      weights_ = NchwcConvWeights(w->data<float>(), w->dim(0), w->dim(1), w->dim(2), w->dim(3), attrs_.group,
                                  xt->dims.size() == 4, block_, std::nullopt, info.prepack);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& w = required_input(ctx, 1);
    const Tensor* b = optional_input(ctx, 2);
    const Tensor* z = optional_input(ctx, 3);
    const Tensor* sc = optional_input(ctx, 4);
    const bool plain = x.rank() == 4;
    if (x.dtype() != DataType::Float || w.dtype() != DataType::Float || w.rank() != 4 ||
        (b && b->dtype() != DataType::Float) || (z && !blocked_float(*z)) || (!plain && !blocked_float(x)) ||
        (!plain && x.dim(4) != block_) || (plain && attrs_.group != 1) || (block_ != 8 && block_ != 16) ||
        w.dim(3) > kNchwcMaxKernelW || (sc && (plain || !blocked_float(*sc) || sc->dim(4) != block_)))
      return fallback_->compute(ctx);
    const int64_t in_c = w.dim(1) * attrs_.group;
    if (!plain && nchwc_blocks(in_c, block_) != x.dim(1))
      throw_bad_input(where_ + ": X " + shape_str(x.shape()) + " does not hold " + std::to_string(in_c) +
                      " input channels in blocks of " + std::to_string(block_));
    const ConvParams p = conv_params(attrs_, plain ? x.shape() : Shape{x.dim(0), in_c, x.dim(2), x.dim(3)}, w.shape());
    if (b && (b->rank() != 1 || b->dim(0) != p.out_channels))
      throw_bad_input(where_ + ": bias B has shape " + shape_str(b->shape()) + ", expected " +
                      std::to_string(p.out_channels));
    const Shape out{p.batch, nchwc_blocks(p.out_channels, block_), p.out[0], p.out[1], block_};
    if (z && z->shape() != out)
      throw_bad_input(where_ + ": residual Z has shape " + shape_str(z->shape()) + ", the output " + shape_str(out));
    Tensor& y = ctx.output(0, out, DataType::Float);
    std::optional<NchwcConvWeights> local;
    const NchwcConvWeights* pw = weights_ && weights_->plain_input() == plain ? &*weights_ : nullptr;
    if (!pw) pw = &local.emplace(pack(w, plain));
    Epilogue ep;
    ep.bias = b ? b->data<float>() : nullptr;
    ep.bias_axis = b ? BiasAxis::PerRow : BiasAxis::None;
    ep.residual = z ? z->data<float>() : nullptr;
    ep.act = act_;
    if (!sc) return nchwc_conv(*pw, conv2d_shape(p), x.data<float>(), y.data<float>(), ep, gemm_run(ctx));
    // X scaled per image and input channel by S (squeeze-excite): the weights are scaled instead,
    // once per image (the rule folding the Mul here asks for fewer weights than X has values).
    const Shape want_s{x.dim(0), x.dim(1), 1, 1, block_};
    if (sc->shape() != want_s)
      throw_bad_input(where_ + ": input scale S has shape " + shape_str(sc->shape()) + ", expected " + shape_str(want_s));
    if (pw->depthwise()) return fallback_->compute(ctx);
    const GemmRun run = gemm_run(ctx);
    float* scaled = static_cast<float*>(ctx.scratch(static_cast<size_t>(pw->packed_size()) * sizeof(float)));
    Conv2dShape one = conv2d_shape(p);
    one.batch = 1;
    const int64_t in_image = x.numel() / x.dim(0), out_image = y.numel() / y.dim(0), s_image = x.dim(1) * block_;
    for (int64_t n = 0; n < x.dim(0); ++n) {
      const NchwcConvWeights wn = pw->with_input_scale(sc->data<float>() + n * s_image, scaled);
      Epilogue en = ep;
      if (z) en.residual = z->data<float>() + n * out_image;
      nchwc_conv(wn, one, x.data<float>() + n * in_image, y.data<float>() + n * out_image, en, run);
    }
  }

 private:
  NchwcConvWeights pack(const Tensor& w, bool plain) const {
    return NchwcConvWeights(w.data<float>(), w.dim(0), w.dim(1), w.dim(2), w.dim(3), attrs_.group, plain, block_);
  }

  WindowAttrs attrs_;
  ActivationSpec act_;
  int64_t block_;
  std::optional<NchwcConvWeights> weights_;
};

// act(X * Scale + Shift) per channel (kernels/nchwc/affine.h); constant Scale and Shift are padded
// to whole blocks once, at creation.
class FastAffine : public FastKernel {
 public:
  explicit FastAffine(const KernelInfo& info) : FastKernel(info), act_(fused::activation_of(info.n())) {
    const Tensor* s = const_float(info, 1);
    const Tensor* t = const_float(info, 2);
    const ValueType* xt = info.input_types.empty() ? nullptr : info.input_types[0];
    if (s && t && s->rank() == 1 && t->shape() == s->shape() && xt && xt->has_shape && xt->dims.size() == 5 &&
        xt->dims[4].value > 0)
      params_.emplace(s->data<float>(), t->data<float>(), s->dim(0), xt->dims[4].value);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& s = required_input(ctx, 1);
    const Tensor& t = required_input(ctx, 2);
    if (!blocked_float(x) || s.dtype() != DataType::Float || t.dtype() != DataType::Float || s.rank() != 1 ||
        t.shape() != s.shape() || nchwc_blocks(s.dim(0), x.dim(4)) != x.dim(1))
      return fallback_->compute(ctx);  // the reference names what is wrong
    std::optional<NchwcAffineParams> local;
    const NchwcAffineParams* p = params_ && params_->channels == s.dim(0) && params_->block == x.dim(4) ? &*params_
                                                                                                       : nullptr;
    if (!p) p = &local.emplace(s.data<float>(), t.data<float>(), s.dim(0), x.dim(4));
    Tensor& y = ctx.output(0, x.shape(), DataType::Float);
    nchwc_affine(*p, act_, x.data<float>(), y.data<float>(), x.dim(0), x.dim(2) * x.dim(3), &ctx.threads());
  }

 private:
  ActivationSpec act_;
  std::optional<NchwcAffineParams> params_;
};

template <PoolMode kMode>
class FastPool : public FastKernel {
 public:
  explicit FastPool(const KernelInfo& info)
      : FastKernel(info),
        attrs_(WindowAttrs::parse(info.n(), WindowKind::Pool)),
        count_include_pad_(info.n().attr_int("count_include_pad", 0) != 0) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (!blocked_float(x)) return fallback_->compute(ctx);
    const int64_t B = x.dim(4);
    const ConvParams p = pool_params(attrs_, Shape{x.dim(0), x.dim(1) * B, x.dim(2), x.dim(3)});
    Pool2d g = Pool2d::from(p, kMode, count_include_pad_);
    g.N = x.dim(0) * x.dim(1);  // each channel block is an NHWC image of B channels
    g.C = B;
    Tensor& y = ctx.output(0, Shape{x.dim(0), x.dim(1), g.OH, g.OW, B}, DataType::Float);
    pool2d_nhwc(g, x.data<float>(), y.data<float>(), ctx.threads());
  }

 private:
  WindowAttrs attrs_;
  bool count_include_pad_;
};

// The max or the mean of each lane of one channel block's plane of hw pixels (B lanes each) into
// y: four pixels at a time into four sets of accumulators (independent chains of adds, fixed-size
// loops the compiler vectorizes), folded at the end; a max ignores NaN taps as std::max does.
template <bool kMax, int B>
void global_pool_plane(const float* p, int64_t hw, float* y) {
  constexpr float kInit = kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
  float a[4][B];
  for (auto& row : a)
    for (float& v : row) v = kInit;
  auto step = [](float acc, float v) { return kMax ? std::max(acc, v) : acc + v; };
  int64_t i = 0;
  for (; i + 4 <= hw; i += 4, p += 4 * B)
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < B; ++j) a[k][j] = step(a[k][j], p[k * B + j]);
  for (; i < hw; ++i, p += B)
    for (int j = 0; j < B; ++j) a[0][j] = step(a[0][j], p[j]);
  for (int j = 0; j < B; ++j) {
    const float v = step(step(a[0][j], a[1][j]), step(a[2][j], a[3][j]));
    y[j] = kMax ? v : v / static_cast<float>(hw);
  }
}

template <bool kMax>
class FastGlobalPool : public FastKernel {
 public:
  explicit FastGlobalPool(const KernelInfo& info) : FastKernel(info) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (!blocked_float(x)) return fallback_->compute(ctx);
    const int64_t B = x.dim(4), hw = x.dim(2) * x.dim(3), blocks = x.dim(0) * x.dim(1);
    Tensor& y = ctx.output(0, Shape{x.dim(0), x.dim(1), 1, 1, B}, DataType::Float);
    const float* xs = x.data<float>();
    float* ys = y.data<float>();
    auto body = [&](int64_t b0, int64_t b1) {
      for (int64_t blk = b0; blk < b1; ++blk) {
        if (B == 16) global_pool_plane<kMax, 16>(xs + blk * hw * B, hw, ys + blk * B);
        else global_pool_plane<kMax, 8>(xs + blk * hw * B, hw, ys + blk * B);
      }
    };
    ThreadPool& pool = ctx.threads();
    if (pool.num_threads() > 1 && blocks * hw * B > 65536) pool.parallel_for(blocks, body, 1);
    else body(0, blocks);
  }
};

}  // namespace

void register_fast_kernels(KernelRegistry& r) {
  add_fast_kernel<FastReorderTo>(r, kFusorDomain, "ReorderToNchwc");
  add_fast_kernel<FastReorderFrom>(r, kFusorDomain, "ReorderFromNchwc");
  add_fast_kernel<FastConv>(r, kFusorDomain, "NchwcConv");
  add_fast_kernel<FastAffine>(r, kFusorDomain, "NchwcAffine");
  add_fast_kernel<FastPool<PoolMode::Max>>(r, kFusorDomain, "NchwcMaxPool");
  add_fast_kernel<FastPool<PoolMode::Average>>(r, kFusorDomain, "NchwcAveragePool");
  add_fast_kernel<FastGlobalPool<false>>(r, kFusorDomain, "NchwcGlobalAveragePool");
  add_fast_kernel<FastGlobalPool<true>>(r, kFusorDomain, "NchwcGlobalMaxPool");
}

}  // namespace fusor::nchwc

namespace fusor {

void register_nchwc_kernels(KernelRegistry& r) {
  nchwc::register_reference_kernels(r);
  nchwc::register_fast_kernels(r);
}

}  // namespace fusor
