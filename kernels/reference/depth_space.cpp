// DepthToSpace (DCR/CRD) and SpaceToDepth reference kernels: 6-D reshape + transpose, done as
// one strided copy into the output viewed as the transposed 6-D tensor.
#include "kernels/common/axes.h"
#include "kernels/common/kernel_util.h"
#include "kernels/common/strided_copy.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

// Copies x viewed as `view6` (row-major reshape) and permuted by `perm` into y viewed likewise.
void permuted_copy(const Tensor& x, const Shape& view6, const std::vector<int>& perm, Tensor& y) {
  std::vector<int64_t> st = row_major_strides(view6), pst(6);
  Shape out6(6);
  for (int d = 0; d < 6; ++d) {
    out6[d] = view6[perm[d]];
    pst[d] = st[perm[d]];
  }
  Tensor yv = y.reshaped(out6);
  strided_copy(x, 0, pst, yv);
}

class DepthToSpaceKernel : public Kernel {
 public:
  explicit DepthToSpaceKernel(const KernelInfo& info) : b_(info.n().attr_int("blocksize", 0)) {
    std::string m = info.n().attr_string("mode", "DCR");
    if (m != "DCR" && m != "CRD") throw_bad_input(info.where() + ": mode must be DCR or CRD");
    crd_ = m == "CRD";
    if (b_ <= 0) throw_bad_input(info.where() + ": blocksize must be positive");
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    if (x.rank() != 4 || x.dim(1) % (b_ * b_) != 0) throw_bad_input(w + ": input must be NCHW with C divisible by blocksize^2");
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), c = C / (b_ * b_);
    Tensor& y = ctx.output(0, {N, c, H * b_, W * b_}, x.dtype());
    if (crd_) permuted_copy(x, {N, c, b_, b_, H, W}, {0, 1, 4, 2, 5, 3}, y);
    else permuted_copy(x, {N, b_, b_, c, H, W}, {0, 3, 4, 1, 5, 2}, y);
  }

 private:
  int64_t b_;
  bool crd_ = false;
};

class SpaceToDepthKernel : public Kernel {
 public:
  explicit SpaceToDepthKernel(const KernelInfo& info) : b_(info.n().attr_int("blocksize", 0)) {
    if (b_ <= 0) throw_bad_input(info.where() + ": blocksize must be positive");
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const std::string w = ctx.where();
    if (x.rank() != 4 || x.dim(2) % b_ || x.dim(3) % b_) throw_bad_input(w + ": input must be NCHW with H and W divisible by blocksize");
    const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
    Tensor& y = ctx.output(0, {N, C * b_ * b_, H / b_, W / b_}, x.dtype());
    permuted_copy(x, {N, C, H / b_, b_, W / b_, b_}, {0, 3, 5, 1, 2, 4}, y);
  }

 private:
  int64_t b_;
};

}  // namespace

void register_layout_kernels(KernelRegistry& r) {
  add_reference_kernel<DepthToSpaceKernel>(r, "DepthToSpace");
  add_reference_kernel<SpaceToDepthKernel>(r, "SpaceToDepth");
}

}  // namespace fusor
