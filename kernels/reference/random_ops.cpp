// Reference random generators: RandomUniform, RandomUniformLike, RandomNormal, RandomNormalLike,
// Bernoulli. Each node draws from its own RandomStream (random_stream.h: seeding, the stream, and
// why it is numpy's), holding its mutex while it draws. Uniform values are low + (high - low) * u;
// Bernoulli(p) is 1 where a uniform draw u is below p.
#include <mutex>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/nn_families.h"
#include "kernels/reference/random_stream.h"

namespace fusor {
namespace {

// The element type a generator writes: the `dtype` attribute, else `fallback`.
DataType dtype_attr(const Node& n, DataType fallback) {
  const Attribute* a = n.attr("dtype");
  return a ? static_cast<DataType>(a->i) : fallback;
}

// RandomUniform / RandomNormal (shape from the attribute) and their *Like forms (shape, and the
// element type unless `dtype` says otherwise, from the input).
class RandomKernel : public Kernel {
 public:
  RandomKernel(const KernelInfo& info, bool normal, bool like)
      : gen_(info.n()), normal_(normal), like_(like), shape_(info.n().attr_ints("shape")),
        dtype_(dtype_attr(info.n(), like ? DataType::Undefined : DataType::Float)),
        a_(info.n().attr_float(normal ? "mean" : "low", 0.f)),
        b_(info.n().attr_float(normal ? "scale" : "high", 1.f)) {}

  void compute(KernelContext& ctx) override {
    Shape shape = shape_;
    DataType dt = dtype_;
    if (like_) {
      const Tensor& x = required_input(ctx, 0);
      shape = x.shape();
      if (dt == DataType::Undefined) dt = x.dtype();
    }
    Tensor& y = ctx.output(0, shape, dt);
    std::lock_guard<std::mutex> lock(gen_.mutex());
    dispatch_float(dt, ctx.where(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* py = y.data<T>();
      for (int64_t i = 0, n = y.numel(); i < n; ++i)
        py[i] = static_cast<T>(normal_ ? a_ + b_ * gen_.normal() : a_ + (b_ - a_) * gen_.uniform());
    });
  }

 private:
  RandomStream gen_;
  bool normal_, like_;
  Shape shape_;
  DataType dtype_;
  double a_, b_;
};

class BernoulliKernel : public Kernel {
 public:
  explicit BernoulliKernel(const KernelInfo& info) : gen_(info.n()), dtype_(dtype_attr(info.n(), DataType::Undefined)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& p = required_input(ctx, 0);
    Tensor& y = ctx.output(0, p.shape(), dtype_ == DataType::Undefined ? p.dtype() : dtype_);
    std::lock_guard<std::mutex> lock(gen_.mutex());
    dispatch_float(p.dtype(), ctx.where(), [&](auto ptag) {
      using P = typename decltype(ptag)::type;
      const P* pp = p.data<P>();
      dispatch_numeric_bool(y.dtype(), ctx.where(), [&](auto ytag) {
        using Y = typename decltype(ytag)::type;
        Y* py = y.data<Y>();
        for (int64_t i = 0, n = y.numel(); i < n; ++i)
          py[i] = static_cast<Y>(gen_.uniform() < static_cast<double>(pp[i]) ? 1 : 0);
      });
    });
  }

 private:
  RandomStream gen_;
  DataType dtype_;
};

template <bool Normal, bool Like>
class RandomOp : public RandomKernel {
 public:
  explicit RandomOp(const KernelInfo& info) : RandomKernel(info, Normal, Like) {}
};

}  // namespace

void register_misc_random_kernels(KernelRegistry& r) {
  add_reference_kernel<RandomOp<false, false>>(r, "RandomUniform");
  add_reference_kernel<RandomOp<false, true>>(r, "RandomUniformLike");
  add_reference_kernel<RandomOp<true, false>>(r, "RandomNormal");
  add_reference_kernel<RandomOp<true, true>>(r, "RandomNormalLike");
  add_reference_kernel<BernoulliKernel>(r, "Bernoulli", 15);
}

}  // namespace fusor
