// Reference kernels of the blocked-layout ops (kernels/nchwc/nchwc_format.h). Each converts its
// blocked operands to NCHW with a plain index loop (NchwcShape::offset), runs ONNX's reference
// kernel of the NCHW op (for NchwcConv also the residual Add and the activation, as FusedConv's
// reference does) and converts the result back, writing zeros into the padding lanes. Obviously
// right and slow: the fast kernels are tested against these.
#include <string>

#include "kernels/common/conv_params.h"
#include "kernels/common/kernel_util.h"
#include "kernels/fused/activation.h"
#include "kernels/fused/common.h"
#include "kernels/fused/inner_op.h"
#include "kernels/nchwc/nchwc_kernels.h"
#include "kernels/nchwc/nchwc_format.h"

namespace fusor::nchwc {
namespace {

using fused::InnerOp;

// The geometry of a blocked tensor whose logical channel count is `channels` (0: every lane).
NchwcShape blocked_shape(const Tensor& x, int64_t channels, const std::string& where) {
  if (x.rank() != 5 || (x.dim(4) != 8 && x.dim(4) != 16))
    throw_bad_input(where + ": expected a blocked tensor [N, CB, H, W, B] with B 8 or 16, got " + shape_str(x.shape()));
  NchwcShape s{x.dim(0), channels > 0 ? channels : x.dim(1) * x.dim(4), x.dim(2), x.dim(3), x.dim(4)};
  if (s.cb() != x.dim(1))
    throw_bad_input(where + ": " + std::to_string(s.c) + " channels do not make " + std::to_string(x.dim(1)) +
                    " blocks of " + std::to_string(s.block) + " (X " + shape_str(x.shape()) + ")");
  return s;
}

Tensor plain_of(const Tensor& x, const NchwcShape& s) {
  Tensor out(DataType::Float, Shape{s.n, s.c, s.h, s.w});
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  for (int64_t n = 0, i = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w) dst[i++] = src[s.offset(n, c, h, w)];
  return out;
}

void write_blocked(KernelContext& ctx, const Tensor& y, int64_t block) {
  if (y.rank() != 4) throw_internal(ctx.where() + ": reference NCHWc result is not rank 4");
  const NchwcShape s{y.dim(0), y.dim(1), y.dim(2), y.dim(3), block};
  Tensor& out = ctx.output(0, Shape{s.n, s.cb(), s.h, s.w, s.block}, DataType::Float);
  float* dst = out.data<float>();
  std::fill(dst, dst + out.numel(), 0.0f);
  const float* src = y.data<float>();
  for (int64_t n = 0, i = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t h = 0; h < s.h; ++h)
        for (int64_t w = 0; w < s.w; ++w) dst[s.offset(n, c, h, w)] = src[i++];
}

const Tensor& float_input(KernelContext& ctx, int i) {
  const Tensor& t = required_input(ctx, i);
  if (t.dtype() != DataType::Float)
    throw_bad_input(ctx.where() + ": input " + std::to_string(i) + " must be float, got " + dtype_name(t.dtype()));
  return t;
}

int64_t block_attr(const Node& n) { return n.attr_int("block", kNchwcBlock); }

class RefReorderTo : public Kernel {
 public:
  explicit RefReorderTo(const KernelInfo& info) : block_(block_attr(info.n())) {
    if (block_ != 8 && block_ != 16) throw_bad_input(info.where() + ": block must be 8 or 16, got " + std::to_string(block_));
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = float_input(ctx, 0);
    if (x.rank() != 4) throw_bad_input(ctx.where() + ": X must have rank 4 (N, C, H, W), got " + shape_str(x.shape()));
    write_blocked(ctx, x, block_);
  }

 private:
  int64_t block_;
};

class RefReorderFrom : public Kernel {
 public:
  explicit RefReorderFrom(const KernelInfo& info) {
    channels_ = info.n().attr_int("channels", 0);
    if (channels_ <= 0) throw_bad_input(info.where() + ": attribute 'channels' must be positive");
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = float_input(ctx, 0);
    const Tensor y = plain_of(x, blocked_shape(x, channels_, ctx.where()));
    fused::write_output(ctx, 0, y);
  }

 private:
  int64_t channels_ = 0;
};

class RefConv : public Kernel {
 public:
  explicit RefConv(const KernelInfo& info)
      : act_(fused::activation_of(info.n())),
        block_(block_attr(info.n())),
        group_(WindowAttrs::parse(info.n(), WindowKind::Conv).group),
        conv_("Conv", 3, strip(fused::attrs_without_activation(info.n()))),
        add_("Add", 2),
        mul_("Mul", 2) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x_in = float_input(ctx, 0);
    const Tensor& w = float_input(ctx, 1);
    const Tensor* b = optional_input(ctx, 2);
    const Tensor* z_in = optional_input(ctx, 3);
    if (w.rank() != 4) throw_bad_input(ctx.where() + ": W must have rank 4 (M, C/group, kh, kw), got " + shape_str(w.shape()));
    const Tensor* s = optional_input(ctx, 4);
    Tensor x = x_in;
    if (s) {  // X scaled per image and input channel, in its blocked form
      const Shape want{x_in.rank() == 5 ? x_in.dim(0) : -1, x_in.rank() == 5 ? x_in.dim(1) : -1, 1, 1, block_};
      if (x_in.rank() != 5 || s->shape() != want)
        throw_bad_input(ctx.where() + ": input scale S " + shape_str(s->shape()) + " needs blocked X and the shape [N, CB, 1, 1, " +
                        std::to_string(block_) + "], X is " + shape_str(x_in.shape()));
      x = mul_.run1(ctx, {&x_in, s});
    }
    if (x.rank() == 5) {
      if (x.dim(4) != block_)
        throw_bad_input(ctx.where() + ": X has block " + std::to_string(x.dim(4)) + ", the node's block is " +
                        std::to_string(block_));
      x = plain_of(x, blocked_shape(x, w.dim(1) * group_, ctx.where()));
    } else if (x_in.rank() != 4) {
      throw_bad_input(ctx.where() + ": X must be blocked (rank 5) or NCHW (rank 4), got " + shape_str(x_in.shape()));
    }
    Tensor y = conv_.run1(ctx, {&x, &w, b});
    if (z_in) {
      const Tensor z = plain_of(*z_in, blocked_shape(*z_in, y.dim(1), ctx.where()));
      if (z.shape() != y.shape())
        throw_bad_input(ctx.where() + ": residual Z " + shape_str(z_in->shape()) + " does not match the output " +
                        shape_str(y.shape()) + " (NCHW)");
      y = add_.run1(ctx, {&y, &z});
    }
    fused::activate_in_place(y, act_, ctx.where());
    write_blocked(ctx, y, block_);
  }

 private:
  static std::vector<Attribute> strip(std::vector<Attribute> a) {
    std::erase_if(a, [](const Attribute& x) { return x.name == "block"; });
    return a;
  }
  ActivationSpec act_;
  int64_t block_;
  int64_t group_;
  InnerOp conv_, add_, mul_;
};

// Y = act(X * Scale[c] + Shift[c]) on each real channel c, element by element; zeros in the padding
// lanes.
class RefAffine : public Kernel {
 public:
  explicit RefAffine(const KernelInfo& info) : act_(fused::activation_of(info.n())) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = float_input(ctx, 0);
    const Tensor& scale = float_input(ctx, 1);
    const Tensor& shift = float_input(ctx, 2);
    if (scale.rank() != 1 || shift.shape() != scale.shape())
      throw_bad_input(ctx.where() + ": Scale and Shift must be vectors of one length (the channels), got " +
                      shape_str(scale.shape()) + " and " + shape_str(shift.shape()));
    const NchwcShape s = blocked_shape(x, scale.dim(0), ctx.where());
    Tensor& y = ctx.output(0, x.shape(), DataType::Float);
    float* dst = y.data<float>();
    std::fill(dst, dst + y.numel(), 0.0f);
    const float *src = x.data<float>(), *k = scale.data<float>(), *t = shift.data<float>();
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t c = 0; c < s.c; ++c)
        for (int64_t h = 0; h < s.h; ++h)
          for (int64_t w = 0; w < s.w; ++w) {
            const int64_t i = s.offset(n, c, h, w);
            dst[i] = fused::activate(act_, src[i] * k[c] + t[c]);
          }
  }

 private:
  ActivationSpec act_;
};

template <const char* kInner>
class RefPool : public Kernel {
 public:
  explicit RefPool(const KernelInfo& info) : pool_(kInner, 1, info.n().attrs) {}
  void compute(KernelContext& ctx) override {
    const Tensor& x = float_input(ctx, 0);
    const NchwcShape s = blocked_shape(x, 0, ctx.where());
    const Tensor xp = plain_of(x, s);
    write_blocked(ctx, pool_.run1(ctx, {&xp}), s.block);
  }

 private:
  InnerOp pool_;
};

constexpr char kMaxPool[] = "MaxPool";
constexpr char kAveragePool[] = "AveragePool";
constexpr char kGlobalAveragePool[] = "GlobalAveragePool";
constexpr char kGlobalMaxPool[] = "GlobalMaxPool";

}  // namespace

void register_reference_kernels(KernelRegistry& r) {
  fused::add_fused_kernel<RefReorderTo>(r, "ReorderToNchwc", "reference", 0);
  fused::add_fused_kernel<RefReorderFrom>(r, "ReorderFromNchwc", "reference", 0);
  fused::add_fused_kernel<RefConv>(r, "NchwcConv", "reference", 0);
  fused::add_fused_kernel<RefAffine>(r, "NchwcAffine", "reference", 0);
  fused::add_fused_kernel<RefPool<kMaxPool>>(r, "NchwcMaxPool", "reference", 0);
  fused::add_fused_kernel<RefPool<kAveragePool>>(r, "NchwcAveragePool", "reference", 0);
  fused::add_fused_kernel<RefPool<kGlobalAveragePool>>(r, "NchwcGlobalAveragePool", "reference", 0);
  fused::add_fused_kernel<RefPool<kGlobalMaxPool>>(r, "NchwcGlobalMaxPool", "reference", 0);
}

}  // namespace fusor::nchwc
