// The blocked per-channel affine map with a fused activation: fusor.NchwcAffine, which the layout
// rules make of an inference BatchNormalization that does not follow a convolution (DenseNet's
// pre-activation Concat -> BatchNormalization -> Relu -> Conv), so the data stays blocked.
//
// For a blocked tensor X [N, CB, H, W, B] (kernels/nchwc/nchwc_format.h) and per-channel vectors
// scale, shift of C channels (CB = ceil(C / B)):
//     Y[n, cb, h, w, l] = act(X[n, cb, h, w, l] * scale[cb B + l] + shift[cb B + l])
// for every real channel cb B + l < C; the padding lanes get act(0) (scale and shift are 0 there),
// finite like the format asks. act is the epilogue's (kernels/epilogue.h), vectorized as the GEMM
// epilogue does it (kernels/gemm/kernel_impl.h), so the same polynomial exp/erf.
//
// NchwcAffineParams holds scale and shift padded to CB * B lanes; a kernel builds it once from
// constant inputs. nchwc_affine() runs the ISA active_isa() picks (AVX-512, AVX2, scalar), split
// over the pool's threads in pieces of whole channel blocks or parts of one when there are few.
// X and Y may be the same buffer.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/epilogue.h"

namespace fusor {

class ThreadPool;

struct NchwcAffineParams {
  int64_t channels = 0, block = 16;
  std::vector<float> scale, shift;  // CB * block lanes each, zero in the padding lanes

  NchwcAffineParams() = default;
  NchwcAffineParams(const float* scale, const float* shift, int64_t channels, int64_t block);
  int64_t blocks() const { return (channels + block - 1) / block; }
};

// Y = act(X * scale + shift) over n images of p.blocks() channel blocks of `pixels` pixels each.
void nchwc_affine(const NchwcAffineParams& p, const ActivationSpec& act, const float* x, float* y, int64_t n,
                  int64_t pixels, ThreadPool* pool);

namespace nchwc_detail {
// One channel block's plane: `pixels` pixels of `block` lanes, lane l scaled by s[l] and shifted
// by t[l]. Compiled per ISA (affine_<isa>.cpp); null when the ISA is not compiled in.
using AffineFn = void (*)(const float* x, float* y, int64_t pixels, int64_t block, const float* s, const float* t,
                          float alpha, float beta);
AffineFn affine_fn_avx512(Activation act);
AffineFn affine_fn_avx2(Activation act);
AffineFn affine_fn_scalar(Activation act);
}  // namespace nchwc_detail

}  // namespace fusor
