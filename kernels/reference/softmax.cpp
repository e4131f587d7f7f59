// Reference Softmax, LogSoftmax and Hardmax.
//
// Opset < 13: the input is coerced to 2-D at `axis` (default 1) and the op runs over each row of
// prod(shape[axis:]) elements. Opset >= 13: the op runs along the single axis `axis` (default -1).
// Both reduce to (outer, len, stride): `outer` independent lines of `len` elements `stride` apart.
#include <algorithm>
#include <cmath>

#include "kernels/common/axes.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/nn_families.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

enum class SoftmaxMode { Softmax, LogSoftmax, Hardmax };

class SoftmaxKernel : public Kernel {
 public:
  SoftmaxKernel(const KernelInfo& info, SoftmaxMode mode)
      : where_(info.where()),
        mode_(mode),
        coerce_2d_(info.opset > 0 && info.opset < 13),
        axis_(info.n().attr_int("axis", coerce_2d_ ? 1 : -1)) {}

  // Every output element is written after all the inputs it depends on were read (same-index or
  // whole-line/channel passes), so Y may share X's buffer.
  std::vector<std::pair<int, int>> inplace_pairs() const override { return {{0, 0}}; }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    Tensor& y = ctx.output(0, x.shape(), x.dtype());
    if (x.numel() == 0) return;
    const int64_t rank = std::max(1, x.rank());
    const int64_t axis = normalize_axis(axis_, rank, where_);
    const Shape& s = x.shape();
    int64_t outer, len, stride;
    if (x.rank() == 0) {
      outer = len = stride = 1;
    } else if (coerce_2d_) {
      outer = dims_product(s, 0, axis);
      len = dims_product(s, axis, x.rank());
      stride = 1;
    } else {
      outer = dims_product(s, 0, axis);
      len = s[axis];
      stride = dims_product(s, axis + 1, x.rank());
    }
    dispatch_float(x.dtype(), where_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = x.data<T>();
      T* py = y.data<T>();
      ctx.threads().parallel_for_cost(outer * stride, 6.0 * static_cast<double>(len), [&](int64_t l0, int64_t l1) {
        for (int64_t l = l0; l < l1; ++l) {
          const int64_t base = (l / stride) * len * stride + l % stride;
          line<T>(px + base, py + base, len, stride);
        }
      });
    });
  }

 private:
  template <typename T>
  void line(const T* x, T* y, int64_t len, int64_t stride) const {
    int64_t arg = 0;
    for (int64_t i = 1; i < len; ++i)
      if (x[i * stride] > x[arg * stride]) arg = i;
    if (mode_ == SoftmaxMode::Hardmax) {
      for (int64_t i = 0; i < len; ++i) y[i * stride] = T(i == arg ? 1 : 0);
      return;
    }
    // exp in the element type (float exp is exact to an ulp or two); the sum in double.
    const T mx = x[arg * stride];
    double sum = 0;
    for (int64_t i = 0; i < len; ++i) {
      const T e = std::exp(x[i * stride] - mx);
      sum += e;
      if (mode_ == SoftmaxMode::Softmax) y[i * stride] = e;  // x[i] is not read again
    }
    if (mode_ == SoftmaxMode::Softmax) {
      const T inv = static_cast<T>(1.0 / sum);
      for (int64_t i = 0; i < len; ++i) y[i * stride] *= inv;
      return;
    }
    const T log_sum = static_cast<T>(std::log(sum));
    for (int64_t i = 0; i < len; ++i) y[i * stride] = (x[i * stride] - mx) - log_sum;
  }

  std::string where_;
  SoftmaxMode mode_;
  bool coerce_2d_;
  int64_t axis_;
};

template <SoftmaxMode mode>
void add_softmax(KernelRegistry& r, const char* op) {
  r.add("", op, "reference", 0, [](const KernelInfo& info) -> std::unique_ptr<Kernel> {
    return std::make_unique<SoftmaxKernel>(info, mode);
  });
}

}  // namespace

void register_nn_softmax_kernels(KernelRegistry& r) {
  add_softmax<SoftmaxMode::Softmax>(r, "Softmax");
  add_softmax<SoftmaxMode::LogSoftmax>(r, "LogSoftmax");
  add_softmax<SoftmaxMode::Hardmax>(r, "Hardmax");
}

}  // namespace fusor
