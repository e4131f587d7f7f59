// NhwcMaxPool, NhwcAveragePool, NhwcGlobalAveragePool, NhwcGlobalMaxPool: reference kernels only
// (ONNX's pool reference kernel between a transpose to channels-first and one back). No fast
// kernel yet: a layout pass that introduces them pays two transposes per pool until one exists.
#include "kernels/common/float16_widening.h"
#include "kernels/fused/common.h"
#include "kernels/fused/inner_op.h"

namespace fusor::fused {
namespace {

template <const char* kInner>
class RefNhwcPool : public Kernel {
 public:
  explicit RefNhwcPool(const KernelInfo& info) : pool_(kInner, 1, info.n().attrs) {}
  void compute(KernelContext& ctx) override {
    if (has_half_input(ctx)) return compute_widened(ctx, [this](KernelContext& c) { compute(c); });
    const Tensor& x = required_input(ctx, 0);
    if (x.rank() < 3)
      throw_bad_input(ctx.where() + ": X must have rank >= 3 (N, spatial..., C), got " + shape_str(x.shape()));
    const Tensor xc = permuted(x, to_channels_first(x.rank()));
    const Tensor y = pool_.run1(ctx, {&xc});
    write_output(ctx, 0, permuted(y, to_channels_last(y.rank())));
  }

 private:
  InnerOp pool_;
};

constexpr char kMaxPool[] = "MaxPool";
constexpr char kAveragePool[] = "AveragePool";
constexpr char kGlobalAveragePool[] = "GlobalAveragePool";
constexpr char kGlobalMaxPool[] = "GlobalMaxPool";

}  // namespace

void register_fused_pool_kernels(KernelRegistry& r) {
  add_fused_kernel<RefNhwcPool<kMaxPool>>(r, "NhwcMaxPool", "reference", 0);
  add_fused_kernel<RefNhwcPool<kAveragePool>>(r, "NhwcAveragePool", "reference", 0);
  add_fused_kernel<RefNhwcPool<kGlobalAveragePool>>(r, "NhwcGlobalAveragePool", "reference", 0);
  add_fused_kernel<RefNhwcPool<kGlobalMaxPool>>(r, "NhwcGlobalMaxPool", "reference", 0);
}

}  // namespace fusor::fused
