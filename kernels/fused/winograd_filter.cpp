// fusor.WinogradFilter: the filter transform of Winograd's F(tile x tile, 3 x 3), U = G g Gᵀ per
// (output, input) channel pair, from W (K, C, 3, 3) to U (a, a, C, K), a = tile + 2: the
// transform fusor.WinogradConv's kernels are made for (kernels/winograd/winograd.h). Rules write
// it on constant filters so constant folding computes U at optimize time (op_traits: its result
// may be 4x its input there).
#include <string>

#include "kernels/common/kernel_util.h"
#include "kernels/fused/common.h"
#include "kernels/winograd/matrices.h"
#include "kernels/winograd/winograd.h"

namespace fusor::fused {
namespace {

class WinogradFilter : public Kernel {
 public:
  explicit WinogradFilter(const KernelInfo& info) {
    const int64_t t = info.n().attr_int("tile", 0);
    if (!winograd::supported_tile(static_cast<int>(t)))
      throw_bad_input(info.n().describe() + ": tile must be 2 or 4, got " + std::to_string(t));
    tile_ = static_cast<int>(t);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& w = required_input(ctx, 0);
    if (w.dtype() != DataType::Float)
      throw_bad_input(ctx.where() + ": WinogradFilter takes float filters, got " + dtype_name(w.dtype()));
    if (w.rank() != 4 || w.dim(2) != 3 || w.dim(3) != 3)
      throw_bad_input(ctx.where() + ": WinogradFilter takes 3x3 filters (K, C, 3, 3), got " + shape_str(w.shape()));
    const int64_t K = w.dim(0), C = w.dim(1), a = tile_ + 2;
    Tensor& u = ctx.output(0, Shape{a, a, C, K}, DataType::Float);
    winograd_transform_filter(w.data<float>(), K, C, tile_, u.data<float>());
  }

 private:
  int tile_ = 0;
};

}  // namespace

void register_fused_winograd_filter_kernels(KernelRegistry& r) {
  add_fused_kernel<WinogradFilter>(r, "WinogradFilter", "reference", 0);
}

}  // namespace fusor::fused
