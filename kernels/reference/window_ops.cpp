// Window generators (opset 17): HannWindow HammingWindow BlackmanWindow.
// y[n] = sum_k a_k cos(2 pi k n / N1), N1 = size (periodic=1) or size - 1 (periodic=0).
#include <cmath>
#include <numbers>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/families.h"

namespace fusor {
namespace {

enum class Window { Hann, Hamming, Blackman };

template <Window K>
class WindowKernel : public Kernel {
 public:
  explicit WindowKernel(const KernelInfo& info)
      : periodic_(info.n().attr_int("periodic", 1) != 0),
        dtype_(static_cast<DataType>(info.n().attr_int("output_datatype", static_cast<int64_t>(DataType::Float)))) {}
  void compute(KernelContext& ctx) override {
    const std::string w = ctx.where();
    std::vector<int64_t> sv = int_list_input(required_input(ctx, 0), w, "size");
    if (sv.size() != 1 || sv[0] < 0) throw_bad_input(w + ": size must be a non-negative scalar");
    const int64_t n = sv[0];
    Tensor& y = ctx.output(0, {n}, dtype_);
    const double n1 = static_cast<double>(periodic_ ? n : n - 1);
    dispatch_numeric(dtype_, w, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (int64_t i = 0; i < n; ++i) {
        const double t = n1 > 0 ? 2 * std::numbers::pi * static_cast<double>(i) / n1 : 0.0;
        double v;
        if constexpr (K == Window::Hann) v = 0.5 - 0.5 * std::cos(t);
        else if constexpr (K == Window::Hamming) v = 25.0 / 46 - (21.0 / 46) * std::cos(t);
        else v = 0.42 - 0.5 * std::cos(t) + 0.08 * std::cos(2 * t);
        y.data<T>()[i] = static_cast<T>(v);
      }
    });
  }

 private:
  bool periodic_;
  DataType dtype_;
};

}  // namespace

void register_window_kernels(KernelRegistry& r) {
  add_reference_kernel<WindowKernel<Window::Hann>>(r, "HannWindow");
  add_reference_kernel<WindowKernel<Window::Hamming>>(r, "HammingWindow");
  add_reference_kernel<WindowKernel<Window::Blackman>>(r, "BlackmanWindow");
}

}  // namespace fusor
