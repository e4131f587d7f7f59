// fusor.NhwcMaxPool, NhwcAveragePool and NhwcGlobalAveragePool on XNNPACK. XNNPACK has no
// ceil_mode, no 1x1 windows, and its average pooling leaves the padding out of the count; those
// forms (and non-float data) run on the cpu kernel.
#include "kernels/common/conv_params.h"
#include "kernels/xnnpack/xnn_kernels.h"

#ifdef FUSOR_HAVE_XNNPACK
#include <xnnpack.h>

namespace fusor::xnnpack {
namespace {

enum class PoolKind { Max, Average };

class XnnPool : public Kernel {
 public:
  XnnPool(const KernelInfo& info, PoolKind kind)
      : where_(info.where()), kind_(kind), attrs_(WindowAttrs::parse(info.n(), WindowKind::Pool)),
        fallback_(cpu_kernel(info)) {
    require_xnnpack(info);
    if (const Attribute* a = info.n().attr("count_include_pad")) count_include_pad_ = a->i != 0;
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (x.dtype() != DataType::Float || x.rank() != 4 || attrs_.ceil_mode) return fallback_->compute(ctx);
    const Shape x_cf = {x.dim(0), x.dim(3), x.dim(1), x.dim(2)};
    const ConvParams p = pool_params(attrs_, x_cf);
    const bool padded = p.pad_begin[0] || p.pad_begin[1] || p.pad_end[0] || p.pad_end[1];
    if (p.kernel[0] * p.kernel[1] <= 1 || (kind_ == PoolKind::Average && count_include_pad_ && padded) ||
        (kind_ == PoolKind::Average && (p.dilations[0] != 1 || p.dilations[1] != 1)))
      return fallback_->compute(ctx);
    Tensor& y = ctx.output(0, {p.batch, p.out[0], p.out[1], p.in_channels}, DataType::Float);
    pthreadpool* tp = thread_pool_for(ctx.threads().num_threads());
    std::lock_guard<std::mutex> lock(mu_);
    if (!op_ || p.in[0] != op_h_ || p.in[1] != op_w_ || p.in_channels != op_c_) create(p);
    if (kind_ == PoolKind::Max)
      check_status(xnn_setup_max_pooling2d_nhwc_f32(op_.get(), p.batch, p.in[0], p.in[1], x.data<float>(),
                                                    y.data<float>(), tp),
                   where_, "setup_max_pooling2d_nhwc_f32");
    else
      check_status(xnn_setup_average_pooling2d_nhwc_f32(op_.get(), p.batch, p.in[0], p.in[1], x.data<float>(),
                                                        y.data<float>(), tp),
                   where_, "setup_average_pooling2d_nhwc_f32");
    check_status(xnn_run_operator(op_.get(), tp), where_, "run_operator");
  }

 private:
  void create(const ConvParams& p) {
    xnn_operator_t op = nullptr;
    const auto u = [](int64_t v) { return static_cast<uint32_t>(v); };
    const Clamp c;
    if (kind_ == PoolKind::Max)
      check_status(xnn_create_max_pooling2d_nhwc_f32(u(p.pad_begin[0]), u(p.pad_end[1]), u(p.pad_end[0]),
                                                     u(p.pad_begin[1]), u(p.kernel[0]), u(p.kernel[1]),
                                                     u(p.strides[0]), u(p.strides[1]), u(p.dilations[0]),
                                                     u(p.dilations[1]), p.in_channels, p.in_channels, p.in_channels,
                                                     c.lo, c.hi, 0, &op),
                   where_, "create_max_pooling2d_nhwc_f32");
    else
      check_status(xnn_create_average_pooling2d_nhwc_f32(u(p.pad_begin[0]), u(p.pad_end[1]), u(p.pad_end[0]),
                                                         u(p.pad_begin[1]), u(p.kernel[0]), u(p.kernel[1]),
                                                         u(p.strides[0]), u(p.strides[1]), p.in_channels,
                                                         p.in_channels, p.in_channels, c.lo, c.hi, 0, &op),
                   where_, "create_average_pooling2d_nhwc_f32");
    op_.reset(op);
    op_h_ = p.in[0];
    op_w_ = p.in[1];
    op_c_ = p.in_channels;
  }

  std::string where_;
  PoolKind kind_;
  WindowAttrs attrs_;
  bool count_include_pad_ = false;
  std::unique_ptr<Kernel> fallback_;
  std::mutex mu_;
  OperatorPtr op_;
  int64_t op_h_ = -1, op_w_ = -1, op_c_ = -1;
};

// NhwcGlobalAveragePool: XNNPACK's global average pooling over N rows of H*W pixels.
class XnnGlobalAveragePool : public Kernel {
 public:
  explicit XnnGlobalAveragePool(const KernelInfo& info) : where_(info.where()), fallback_(cpu_kernel(info)) {
    require_xnnpack(info);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = *ctx.input(0);
    if (x.dtype() != DataType::Float || x.rank() != 4) return fallback_->compute(ctx);
    const int64_t n = x.dim(0), c = x.dim(3), pixels = x.dim(1) * x.dim(2);
    Tensor& y = ctx.output(0, {n, 1, 1, c}, DataType::Float);
    pthreadpool* tp = thread_pool_for(ctx.threads().num_threads());
    std::lock_guard<std::mutex> lock(mu_);
    if (!op_ || c != op_c_) {
      xnn_operator_t op = nullptr;
      const Clamp cl;
      check_status(xnn_create_global_average_pooling_nwc_f32(c, c, c, cl.lo, cl.hi, 0, &op), where_,
                   "create_global_average_pooling_nwc_f32");
      op_.reset(op);
      op_c_ = c;
    }
    check_status(xnn_setup_global_average_pooling_nwc_f32(op_.get(), n, pixels, x.data<float>(), y.data<float>(), tp),
                 where_, "setup_global_average_pooling_nwc_f32");
    check_status(xnn_run_operator(op_.get(), tp), where_, "run_operator");
  }

 private:
  std::string where_;
  std::unique_ptr<Kernel> fallback_;
  std::mutex mu_;
  OperatorPtr op_;
  int64_t op_c_ = -1;
};

}  // namespace

void register_xnnpack_pool(KernelRegistry& r) {
  r.add(kFusorDomain, "NhwcMaxPool", kImpl, kPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<XnnPool>(i, PoolKind::Max); });
  r.add(kFusorDomain, "NhwcAveragePool", kImpl, kPriority, [](const KernelInfo& i) -> std::unique_ptr<Kernel> {
    return std::make_unique<XnnPool>(i, PoolKind::Average);
  });
  r.add(kFusorDomain, "NhwcGlobalAveragePool", kImpl, kPriority,
        [](const KernelInfo& i) -> std::unique_ptr<Kernel> { return std::make_unique<XnnGlobalAveragePool>(i); });
}

}  // namespace fusor::xnnpack
#endif
