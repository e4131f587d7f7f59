// Winograd convolution F(m x m, 3 x 3) (m = 2 or 4; matrices.h) for 3x3, stride 1, dilation 1,
// single-group 2-D convolutions on NCHW float data, with the conv epilogue (bias per output channel,
// residual of Y's shape, activation; kernels/epilogue.h) applied on each strip while it is in cache.
//
// Filters arrive already transformed, U = G g Gᵀ with shape (a, a, C, K) (a = m + 2), as
// fusor.WinogradConv carries them (the rule computes them at optimize time);
// `winograd_transform_filter` computes the same thing (fusor.WinogradFilter, tests, benchmarks). WinogradWeights
// packs U once for the kernel's ISA.
//
// The work: the output is cut into strips of whole tile rows; each strip's input is packed into
// channel blocks, transformed (Bᵀ d B), multiplied with U by a*a small GEMMs on a dedicated
// register-blocked kernel (tiles x output channels, channels vectorized), transformed back
// (Aᵀ M A) and written to Y, then the epilogue runs on those rows. Strips are sized so one
// strip's transformed data stays in L2 and are spread over the ThreadPool (with output-channel
// blocks split too when there are fewer strips than threads). Scratch comes from GemmRun::scratch.
//
// Blocked layout (WinogradShape::block = 16): the pack reads block rows directly and the output
// vectors are stored with bias, residual and a clamp activation (None/Relu/Clip) applied in
// registers; other activations run on each finished strip.
//
// Padding: any pads >= 0 (zeros). Y's spatial size is (H + pad_t + pad_b - 2) x (W + pad_l + pad_r - 2).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/epilogue.h"
#include "kernels/gemm/gemm.h"
#include "kernels/prepack.h"

namespace fusor {

struct WinogradShape {
  int64_t batch = 1, in_c = 0, in_h = 0, in_w = 0;
  int64_t out_c = 0, out_h = 0, out_w = 0;
  int64_t pad_t = 0, pad_l = 0;  // bottom/right padding is implied by out_h/out_w
  // 0: X, Y (and the residual) are NCHW. 16: they are blocked (kernels/nchwc/nchwc_format.h),
  // X [batch, ceil(in_c / 16), in_h, in_w, 16], Y [batch, ceil(out_c / 16), out_h, out_w, 16];
  // X's padding lanes are never read, Y's get act(0 + the residual's lane), as NchwcConv's.
  int64_t block = 0;
};

// Transformed filters packed for one ISA's kernel. Given a Prepacker (a kernel's
// KernelInfo::prepack), the packed U is the prepacked buffer "u.wino.m<m>/<isa>" (kernels/prepack.h),
// so a session restored from an image maps it.
class WinogradWeights {
 public:
  WinogradWeights() = default;
  // u: (a, a, in_c, out_c) row-major, a = m + 2.
  WinogradWeights(const float* u, int m, int64_t in_c, int64_t out_c, std::optional<Isa> isa = {},
                  const Prepacker& pp = {});

  bool empty() const { return !data_; }
  int m() const { return m_; }
  Isa isa() const { return isa_; }
  int64_t in_c() const { return in_c_; }
  int64_t out_c() const { return out_c_; }

 private:
  friend void winograd_conv2d(const WinogradWeights&, const WinogradShape&, const float*, float*, const Epilogue&,
                              const GemmRun&);
  std::shared_ptr<const float> data_;
  int m_ = 4;
  Isa isa_ = Isa::Scalar;
  int64_t in_c_ = 0, out_c_ = 0, cp_ = 0, kp_ = 0;
};

// Y = epilogue(conv3x3(X, W)) where U = G W Gᵀ. X: (batch, in_c, in_h, in_w); Y: (batch, out_c,
// out_h, out_w). The epilogue's residual, if any, has Y's shape and must not overlap Y.
void winograd_conv2d(const WinogradWeights& w, const WinogradShape& s, const float* x, float* y,
                     const Epilogue& ep = {}, const GemmRun& run = {});

// U = G g Gᵀ for every (output, input) channel pair of g (out_c, in_c, 3, 3), as (a, a, in_c, out_c),
// computed in double and rounded once. The first form writes into u (a * a * in_c * out_c floats):
// fusor.WinogradFilter's kernel.
void winograd_transform_filter(const float* g, int64_t out_c, int64_t in_c, int m, float* u);
std::vector<float> winograd_transform_filter(const float* g, int64_t out_c, int64_t in_c, int m);

}  // namespace fusor
