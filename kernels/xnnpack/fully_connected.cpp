// Gemm and fusor.FusedGemm with a constant B on XNNPACK's fully_connected_nc_f32: Y = A x op(B) + C,
// C a bias of N elements (or absent), alpha = beta = 1, A not transposed, and for FusedGemm a clamp
// activation. Other forms run on the cpu kernel.
#include "kernels/fused/activation.h"
#include "kernels/xnnpack/xnn_kernels.h"

#ifdef FUSOR_HAVE_XNNPACK
#include <xnnpack.h>

namespace fusor::xnnpack {
namespace {

class XnnFullyConnected : public Kernel {
 public:
  // `b` is [N, K] when trans_b, else [K, N].
  XnnFullyConnected(const KernelInfo& info, const Tensor& b, bool trans_b, const Tensor* c, Clamp clamp)
      : where_(info.where()), fallback_(cpu_kernel(info)) {
    k_ = trans_b ? b.dim(1) : b.dim(0);
    n_ = trans_b ? b.dim(0) : b.dim(1);
    xnn_operator_t op = nullptr;
    // XNNPACK packs the weights at creation; it keeps no pointer to b or c.
    check_status(xnn_create_fully_connected_nc_f32(k_, n_, k_, n_, b.data<float>(), c ? c->data<float>() : nullptr,
                                                   clamp.lo, clamp.hi, trans_b ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS, &op),
                 where_, "create_fully_connected_nc_f32");
    op_.reset(op);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = *ctx.input(0);
    if (a.dtype() != DataType::Float || a.rank() != 2 || a.dim(1) != k_) return fallback_->compute(ctx);
    Tensor& y = ctx.output(0, {a.dim(0), n_}, DataType::Float);
    pthreadpool* tp = thread_pool_for(ctx.threads().num_threads());
    std::lock_guard<std::mutex> lock(mu_);
    check_status(xnn_setup_fully_connected_nc_f32(op_.get(), a.dim(0), a.data<float>(), y.data<float>(), tp), where_,
                 "setup_fully_connected_nc_f32");
    check_status(xnn_run_operator(op_.get(), tp), where_, "run_operator");
  }

 private:
  std::string where_;
  std::unique_ptr<Kernel> fallback_;
  int64_t k_ = 0, n_ = 0;
  std::mutex mu_;
  OperatorPtr op_;
};

int64_t int_attr(const Node& n, const char* name, int64_t dflt) {
  const Attribute* a = n.attr(name);
  return a ? a->i : dflt;
}
float float_attr(const Node& n, const char* name, float dflt) {
  const Attribute* a = n.attr(name);
  return a ? a->f : dflt;
}

std::unique_ptr<Kernel> make_fully_connected(const KernelInfo& info, bool fused) {
  require_xnnpack(info);
  const Node& n = info.n();
  const Tensor* b = const_float_input(info, 1);
  const bool has_c = n.inputs.size() > 2 && n.inputs[2] != kNoValue;
  const Tensor* c = has_c ? const_float_input(info, 2) : nullptr;
  std::optional<Clamp> clamp = fused ? clamp_of(fused::activation_of(n)) : std::optional<Clamp>(Clamp{});
  const bool trans_b = int_attr(n, "transB", 0) != 0;
  if (!b || b->rank() != 2 || (has_c && !c) || !clamp || int_attr(n, "transA", 0) != 0 ||
      float_attr(n, "alpha", 1.0f) != 1.0f || (has_c && float_attr(n, "beta", 1.0f) != 1.0f) ||
      input_known_not_float(info, 0))
    return cpu_kernel(info);
  const int64_t out = trans_b ? b->dim(0) : b->dim(1);
  if (c && c->numel() != out) return cpu_kernel(info);  // a broadcast C that is not a bias row
  return std::make_unique<XnnFullyConnected>(info, *b, trans_b, c, *clamp);
}

}  // namespace

void register_xnnpack_fully_connected(KernelRegistry& r) {
  r.add("", "Gemm", kImpl, kPriority, [](const KernelInfo& i) { return make_fully_connected(i, false); });
  r.add(kFusorDomain, "FusedGemm", kImpl, kPriority, [](const KernelInfo& i) { return make_fully_connected(i, true); });
}

}  // namespace fusor::xnnpack
#endif
