// Internal: the plane loop of the blocked affine map (kernels/nchwc/affine.h), written once over a
// vector type V (kernels/gemm/simd.h) and compiled per ISA (affine_<isa>.cpp). Include only from
// those files, after simd.h.
#pragma once
#include "kernels/gemm/kernel_impl.h"
#include "kernels/nchwc/affine.h"

namespace fusor::FUSOR_SIMD_NS {

// A plane is pixels x block floats whose lane pattern repeats every `block` floats. The loop walks
// it in periods of P = max(W, block) floats, P / W registers of scale and shift built once (W = 16
// and block 8: one register holds two pixels; W = 8 and block 16: two registers per pixel).
template <class V, Activation K>
void affine_plane(const float* x, float* y, int64_t pixels, int64_t block, const float* s, const float* t,
                  float alpha, float beta) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  constexpr int kMaxR = 16;  // 16 lanes of 1 (scalar)
  const int64_t P = block > W ? block : W;
  const int R = static_cast<int>(P / W);
  if (R > kMaxR) return;  // unreachable for block <= 16
  float srep[kMaxR * W], trep[kMaxR * W];
  for (int64_t i = 0; i < P; ++i) {
    srep[i] = s[i % block];
    trep[i] = t[i % block];
  }
  reg sv[kMaxR], tv[kMaxR];
  for (int r = 0; r < R; ++r) {
    sv[r] = V::load(srep + r * W);
    tv[r] = V::load(trep + r * W);
  }
  const int64_t len = pixels * block;
  int64_t j = 0;
  if (R == 1) {
    const reg s0 = sv[0], t0 = tv[0];
#pragma GCC unroll 4
    for (; j + W <= len; j += W) V::store(y + j, activate<V, K>(V::fma(V::load(x + j), s0, t0), alpha, beta));
    if (j < len) {
      const int n = static_cast<int>(len - j);
      V::store_n(y + j, activate<V, K>(V::fma(V::load_n(x + j, n), s0, t0), alpha, beta), n);
    }
    return;
  }
  for (; j < len; j += P)  // len is a multiple of block = P here
    for (int r = 0; r < R; ++r)
      V::store(y + j + r * W, activate<V, K>(V::fma(V::load(x + j + r * W), sv[r], tv[r]), alpha, beta));
}

template <class V>
nchwc_detail::AffineFn affine_fn(Activation act) {
  switch (act) {
#define FUSOR_CASE(K) \
  case Activation::K: return &affine_plane<V, Activation::K>;
    FUSOR_CASE(None) FUSOR_CASE(Relu) FUSOR_CASE(Clip) FUSOR_CASE(LeakyRelu) FUSOR_CASE(Sigmoid)
    FUSOR_CASE(Tanh) FUSOR_CASE(HardSigmoid) FUSOR_CASE(HardSwish) FUSOR_CASE(SiLU) FUSOR_CASE(Gelu) FUSOR_CASE(GeluTanh)
#undef FUSOR_CASE
  }
  return nullptr;
}

}  // namespace fusor::FUSOR_SIMD_NS
