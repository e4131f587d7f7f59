// The "fast" (priority 10) ONNX ConvTranspose kernel, 2-D float: per batch and group, the GEMM
// core computes columns = Wᵀ·X (Cout/g·kh·kw rows, one column per input pixel; Wᵀ packed once
// when W is constant), then col2im adds each column's taps into the output, which starts from the
// bias. Input pixels are taken in chunks so the columns buffer stays bounded. Other cases (N-d,
// other element types) go to the reference kernel. Geometry (pads, output_padding,
// output_shape, auto_pad) is conv_transpose_params', shared with the reference.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/conv_params.h"
#include "kernels/common/fast_kernel.h"
#include "kernels/common/kernel_util.h"
#include "kernels/gemm/gemm.h"
#include "kernels/kernel.h"
#include "kernels/register.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

class FastConvTranspose : public FastKernel {
 public:
  explicit FastConvTranspose(const KernelInfo& info)
      : FastKernel(info), attrs_(WindowAttrs::parse(info.n(), WindowKind::ConvTranspose)) {
    // A constant 4-D W: each group's Wᵀ (Cout/g·kh·kw x Cin/g) packed once.
    if (const Tensor* w = const_float(info, 1); w && w->rank() == 4 && attrs_.group >= 1 &&
                                                          w->dim(0) % attrs_.group == 0) {
      const int64_t g = attrs_.group, cin_g = w->dim(0) / g, rows = w->dim(1) * w->dim(2) * w->dim(3);
      for (int64_t i = 0; i < g; ++i)
        packed_.emplace_back(MatrixRef{w->data<float>() + i * cin_g * rows, rows, true}, rows, cin_g, std::nullopt,
                             info.prepack, "wt.g" + std::to_string(i));
      packed_shape_ = w->shape();
    }
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& w = required_input(ctx, 1);
    const Tensor* b = optional_input(ctx, 2);
    if (x.dtype() != DataType::Float || w.dtype() != DataType::Float || x.rank() != 4 || w.rank() != 4 ||
        (b && b->dtype() != DataType::Float))
      return fallback_->compute(ctx);
    const ConvParams p = conv_transpose_params(attrs_, x.shape(), w.shape());
    if (b && b->numel() != p.out_channels) return fallback_->compute(ctx);  // the reference names the error
    Tensor& y = ctx.output(0, p.output_shape(), DataType::Float);
    const int64_t G = p.group, cin_g = p.in_channels / G, cout_g = p.out_channels / G;
    const int64_t kh = p.kernel[0], kw = p.kernel[1], H = p.in[0], W = p.in[1], OH = p.out[0], OW = p.out[1];
    const int64_t rows = cout_g * kh * kw, HW = H * W, OHW = OH * OW;
    const bool use_packed = !packed_.empty() && packed_shape_ == w.shape();
    // Columns for up to `chunk` input pixels at a time: about 4 MB.
    const int64_t chunk = std::max<int64_t>(64, std::min<int64_t>(HW, (int64_t{1} << 20) / std::max<int64_t>(1, rows)));
    float* cols = static_cast<float*>(ctx.scratch(sizeof(float) * rows * chunk));
    const GemmRun run = gemm_run(ctx);
    const float* px = x.data<float>();
    const float* pw = w.data<float>();
    float* py = y.data<float>();
    for (int64_t n = 0; n < p.batch; ++n) {
      // Output starts from the bias (or zero).
      ctx.threads().parallel_for_cost(p.out_channels, 0.25 * static_cast<double>(OHW), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          float* yc = py + (n * p.out_channels + c) * OHW;
          std::fill(yc, yc + OHW, b ? b->data<float>()[c] : 0.f);
        }
      });
      for (int64_t g = 0; g < G; ++g) {
        const float* xg = px + (n * p.in_channels + g * cin_g) * HW;
        for (int64_t p0 = 0; p0 < HW; p0 += chunk) {
          const int64_t np = std::min(chunk, HW - p0);
          const MatrixRef xb{xg + p0, HW};
          if (use_packed) gemm(packed_[g], np, xb, cols, np, {}, run);
          else gemm(rows, np, cin_g, MatrixRef{pw + g * cin_g * rows, rows, true}, xb, cols, np, {}, run);
          // col2im: each output channel's plane is written by one task only.
          ctx.threads().parallel_for_cost(cout_g, 0.5 * static_cast<double>(kh * kw * np), [&](int64_t c0, int64_t c1) {
            for (int64_t c = c0; c < c1; ++c) {
              float* yc = py + (n * p.out_channels + g * cout_g + c) * OHW;
              for (int64_t ti = 0; ti < kh; ++ti)
                for (int64_t tj = 0; tj < kw; ++tj) {
                  const float* col = cols + ((c * kh + ti) * kw + tj) * np - p0;  // indexed by pixel
                  const int64_t off_w = tj * p.dilations[1] - p.pad_begin[1];
                  for (int64_t ih = p0 / W; ih * W < p0 + np; ++ih) {
                    const int64_t oh = ih * p.strides[0] - p.pad_begin[0] + ti * p.dilations[0];
                    if (oh < 0 || oh >= OH) continue;
                    const int64_t q0 = std::max(p0, ih * W), q1 = std::min(p0 + np, ih * W + W);
                    float* yr = yc + oh * OW;
                    for (int64_t q = q0; q < q1; ++q) {
                      const int64_t ow = (q - ih * W) * p.strides[1] + off_w;
                      if (ow >= 0 && ow < OW) yr[ow] += col[q];
                    }
                  }
                }
            }
          });
        }
      }
    }
  }

 private:
  WindowAttrs attrs_;
  std::vector<PackedA> packed_;
  Shape packed_shape_;
};

}  // namespace

void register_fast_conv_transpose_kernels(KernelRegistry& r) {
  add_fast_kernel<FastConvTranspose>(r, "", "ConvTranspose");
}

}  // namespace fusor
