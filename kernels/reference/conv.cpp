// Reference Conv and ConvTranspose: direct loops over the geometry of kernels/common/conv_params.h.
#include <algorithm>

#include "kernels/common/conv_params.h"
#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/kernel_util.h"
#include "kernels/reference/conv_ref.h"
#include "kernels/reference/nn_families.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

void check_bias(const Tensor* b, int64_t channels, const std::string& where) {
  if (b && (b->rank() != 1 || b->dim(0) != channels))
    throw_bad_input(where + ": bias B has shape " + shape_str(b->shape()) + ", expected " + std::to_string(channels));
}

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const KernelInfo& info) : attrs_(WindowAttrs::parse(info.n(), WindowKind::Conv)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& w = required_input(ctx, 1);
    const Tensor* b = optional_input(ctx, 2);
    if (w.dtype() != x.dtype() || (b && b->dtype() != x.dtype()))
      throw_bad_input(attrs_.where + ": inputs have different element types");
    const ConvParams p = conv_params(attrs_, x.shape(), w.shape());
    check_bias(b, p.out_channels, attrs_.where);
    Tensor& y = ctx.output(0, p.output_shape(), x.dtype());
    dispatch_float(x.dtype(), attrs_.where, [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto id = [](T v) { return v; };
      conv_forward_ref<double>(p, x.data<T>(), w.data<T>(), y.data<T>(), id, id, ctx.threads());
      if (b) {
        const T* pb = b->data<T>();
        T* py = y.data<T>();
        const int64_t os = p.out_spatial_size();
        for (int64_t n = 0; n < p.batch; ++n)
          for (int64_t m = 0; m < p.out_channels; ++m)
            for (int64_t i = 0; i < os; ++i) py[(n * p.out_channels + m) * os + i] += pb[m];
      }
    });
  }

 private:
  WindowAttrs attrs_;
};

// Scatter form: every input element times every tap lands on one output position
// (conv_params.h gives the coordinate map). Tasks own (n, m) output planes, so no two threads
// write the same element.
class ConvTransposeKernel : public Kernel {
 public:
  explicit ConvTransposeKernel(const KernelInfo& info)
      : attrs_(WindowAttrs::parse(info.n(), WindowKind::ConvTranspose)) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& w = required_input(ctx, 1);
    const Tensor* b = optional_input(ctx, 2);
    if (w.dtype() != x.dtype() || (b && b->dtype() != x.dtype()))
      throw_bad_input(attrs_.where + ": inputs have different element types");
    const ConvParams p = conv_transpose_params(attrs_, x.shape(), w.shape());
    check_bias(b, p.out_channels, attrs_.where);
    Tensor& y = ctx.output(0, p.output_shape(), x.dtype());
    dispatch_float(x.dtype(), attrs_.where, [&](auto tag) {
      using T = typename decltype(tag)::type;
      run<T>(p, x.data<T>(), w.data<T>(), b ? b->data<T>() : nullptr, y.data<T>(), ctx.threads());
    });
  }

 private:
  // For each (input channel, tap, leading input coordinates) the last spatial axis is one strided
  // run: input w maps to output w * stride + offset, over the w range that lands inside Y.
  template <typename T>
  static void run(const ConvParams& p, const T* x, const T* w, const T* b, T* y, ThreadPool& pool) {
    const int nd = p.nd, last = nd - 1;
    const int64_t ks = p.kernel_size(), os = p.out_spatial_size(), is = p.in_spatial_size();
    const int64_t cg = p.in_per_group(), mg = p.out_per_group(), M = p.out_channels;
    const int64_t in_w = p.in[last], out_w = p.out[last], s_w = p.strides[last];
    const int64_t rows = is / std::max<int64_t>(1, in_w);  // product of the leading input dims
    const Shape lead_in(p.in.begin(), p.in.end() - 1);
    const std::vector<int64_t> taps = kernel_tap_coords(p);
    pool.parallel_for(p.batch * M, [&](int64_t t0, int64_t t1) {
      std::vector<int64_t> row(std::max(0, last));
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t n = t / M, m = t % M, g = m / mg, ml = m % mg;
        T* acc = y + t * os;
        std::fill(acc, acc + os, b ? b[m] : T(0));
        for (int64_t c = 0; c < cg; ++c) {
          const int64_t ci = g * cg + c;
          const T* xc = x + (n * p.in_channels + ci) * is;
          const T* wc = w + (ci * mg + ml) * ks;
          for (int64_t k = 0; k < ks; ++k) {
            const T wv = wc[k];
            const int64_t off = taps[k * nd + last] * p.dilations[last] - p.pad_begin[last];
            // in-range input w: 0 <= w * s_w + off < out_w
            int64_t w_lo = off >= 0 ? 0 : (-off + s_w - 1) / s_w;
            int64_t w_hi = out_w - 1 - off < 0 ? -1 : (out_w - 1 - off) / s_w;  // inclusive
            w_hi = std::min(w_hi, in_w - 1);
            if (w_lo > w_hi) continue;
            std::fill(row.begin(), row.end(), 0);
            for (int64_t r = 0; r < rows; ++r, next_coord(row, lead_in)) {
              int64_t out_row = 0;
              bool inside = true;
              for (int d = 0; d < last && inside; ++d) {
                const int64_t o = row[d] * p.strides[d] - p.pad_begin[d] + taps[k * nd + d] * p.dilations[d];
                inside = o >= 0 && o < p.out[d];
                out_row = out_row * p.out[d] + o;
              }
              if (!inside) continue;
              const T* xr = xc + r * in_w;
              T* ar = acc + out_row * out_w;
              for (int64_t iw = w_lo; iw <= w_hi; ++iw) ar[iw * s_w + off] += xr[iw] * wv;
            }
          }
        }
      }
    });
  }

  WindowAttrs attrs_;
};

}  // namespace

void register_nn_conv_kernels(KernelRegistry& r) {
  add_reference_kernel<ConvKernel>(r, "Conv");
  add_reference_kernel<ConvTransposeKernel>(r, "ConvTranspose");
}

}  // namespace fusor
