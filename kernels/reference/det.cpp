// Reference Det: determinant of each trailing M x M matrix, by Gaussian elimination with
// partial pivoting in double precision.
#include <algorithm>
#include <cmath>
#include <utility>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/nn_families.h"

namespace fusor {

namespace {

class DetKernel : public Kernel {
 public:
  explicit DetKernel(const KernelInfo& info) : where_(info.where()) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    if (x.rank() < 2 || x.dim(-1) != x.dim(-2))
      throw_bad_input(where_ + ": input must be [..., M, M], got " + shape_str(x.shape()));
    const int64_t m = x.dim(-1);
    const Shape out(x.shape().begin(), x.shape().end() - 2);
    Tensor& y = ctx.output(0, out, x.dtype());
    double* a = static_cast<double*>(ctx.scratch(sizeof(double) * std::max<int64_t>(1, m * m)));
    dispatch_float(x.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t b = 0; b < shape_numel(out); ++b) {
        for (int64_t i = 0; i < m * m; ++i) a[i] = x.data<T>()[b * m * m + i];
        double det = 1;
        for (int64_t c = 0; c < m; ++c) {
          int64_t piv = c;
          for (int64_t r = c + 1; r < m; ++r)
            if (std::fabs(a[r * m + c]) > std::fabs(a[piv * m + c])) piv = r;
          if (a[piv * m + c] == 0) { det = 0; break; }
          if (piv != c) {
            for (int64_t k = 0; k < m; ++k) std::swap(a[c * m + k], a[piv * m + k]);
            det = -det;
          }
          det *= a[c * m + c];
          for (int64_t r = c + 1; r < m; ++r) {
            const double f = a[r * m + c] / a[c * m + c];
            for (int64_t k = c; k < m; ++k) a[r * m + k] -= f * a[c * m + k];
          }
        }
        y.data<T>()[b] = static_cast<T>(det);
      }
    });
  }

 private:
  std::string where_;
};

}  // namespace

void register_misc_det_kernels(KernelRegistry& r) { add_reference_kernel<DetKernel>(r, "Det"); }

}  // namespace fusor
