// The recurrent inner loops (recurrent_kernels.h), written once over a vector type V
// (kernels/gemm/simd.h) and compiled per ISA. Include only from recurrent_<isa>.cpp after defining
// FUSOR_SIMD_NS. Uses nothing inline from std:: (see simd.h).
#pragma once
#include "kernels/gemm/simd.h"
#include "kernels/gemm/kernel_impl.h"
#include "kernels/rnn/recurrent_kernels.h"

namespace fusor::FUSOR_SIMD_NS {

inline int64_t lesser(int64_t a, int64_t b) { return a < b ? a : b; }

// R rows x NV vectors of c += a * bt over K; `cols` (<= NV * W) columns are valid.
template <class V, int R, int NV>
inline void gemv_block(int64_t K, const float* a, int64_t lda, const float* bt, int64_t ldb, float* c, int64_t ldc,
                       int64_t cols) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  reg acc[R][NV];
  int n[NV];
  for (int j = 0; j < NV; ++j) n[j] = static_cast<int>(lesser(W, cols - j * W > 0 ? cols - j * W : 0));
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NV; ++j) acc[r][j] = n[j] == W ? V::load(c + r * ldc + j * W) : V::load_n(c + r * ldc + j * W, n[j]);
  if (cols == NV * W) {
    for (int64_t k = 0; k < K; ++k) {
      reg b[NV];
      for (int j = 0; j < NV; ++j) b[j] = V::load(bt + k * ldb + j * W);
      for (int r = 0; r < R; ++r) {
        const reg av = V::set1(a[r * lda + k]);
        for (int j = 0; j < NV; ++j) acc[r][j] = V::fma(av, b[j], acc[r][j]);
      }
    }
  } else {
    for (int64_t k = 0; k < K; ++k) {
      reg b[NV];
      for (int j = 0; j < NV; ++j) b[j] = V::load_n(bt + k * ldb + j * W, n[j]);
      for (int r = 0; r < R; ++r) {
        const reg av = V::set1(a[r * lda + k]);
        for (int j = 0; j < NV; ++j) acc[r][j] = V::fma(av, b[j], acc[r][j]);
      }
    }
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NV; ++j) {
      if (n[j] == W) V::store(c + r * ldc + j * W, acc[r][j]);
      else if (n[j] > 0) V::store_n(c + r * ldc + j * W, acc[r][j], n[j]);
    }
}

template <class V, int R, int NV>
inline void gemv_rows(int64_t K, int64_t N, const float* a, int64_t lda, const float* bt, int64_t ldb, float* c,
                      int64_t ldc) {
  constexpr int64_t step = NV * V::kWidth;
  for (int64_t j0 = 0; j0 < N; j0 += step)
    gemv_block<V, R, NV>(K, a, lda, bt + j0, ldb, c + j0, ldc, lesser(step, N - j0));
}

template <class V>
void gemv_acc(int64_t rows, int64_t K, int64_t N, const float* a, int64_t lda, const float* bt, int64_t ldb, float* c,
              int64_t ldc) {
  // Accumulators: 1 row x 8 vectors (8 independent FMA chains), else up to 4 rows sharing each
  // loaded vector of bt; AVX2 and scalar have half the registers.
  constexpr int kWide = V::kWidth >= 16 ? 2 : 1;
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4)
    gemv_rows<V, 4, 2 * kWide>(K, N, a + r * lda, lda, bt, ldb, c + r * ldc, ldc);
  switch (rows - r) {
    case 3: gemv_rows<V, 3, 2 * kWide>(K, N, a + r * lda, lda, bt, ldb, c + r * ldc, ldc); break;
    case 2: gemv_rows<V, 2, 3 * kWide>(K, N, a + r * lda, lda, bt, ldb, c + r * ldc, ldc); break;
    case 1: gemv_rows<V, 1, 4 * kWide>(K, N, a + r * lda, lda, bt, ldb, c + r * ldc, ldc); break;
    default: break;
  }
}

template <class V>
inline typename V::reg sigmoid_v(typename V::reg x) {
  return activate<V, Activation::Sigmoid>(x, 0, 0);
}
template <class V>
inline typename V::reg tanh_v(typename V::reg x) {
  return activate<V, Activation::Tanh>(x, 0, 0);
}
template <class V>
inline typename V::reg clip_v(typename V::reg x, float clip) {
  return clip > 0 ? V::min(V::max(x, V::set1(-clip)), V::set1(clip)) : x;
}

// Runs body(j, n) over [0, H) in vectors of W lanes (n < W on the last).
template <class V, class Body>
inline void for_lanes(int64_t H, Body&& body) {
  constexpr int W = V::kWidth;
  for (int64_t j = 0; j < H; j += W) body(j, static_cast<int>(lesser(W, H - j)));
}

template <class V>
inline typename V::reg ld(const float* p, int n) {
  return n == V::kWidth ? V::load(p) : V::load_n(p, n);
}
template <class V>
inline void st(float* p, typename V::reg v, int n) {
  if (n == V::kWidth) V::store(p, v);
  else V::store_n(p, v, n);
}

template <class V>
void lstm_row(int64_t H, float* g, float* c, float* h, const float* p, float clip, bool input_forget) {
  using reg = typename V::reg;
  for_lanes<V>(H, [&](int64_t j, int n) {
    const reg cp = ld<V>(c + j, n);
    reg gi = ld<V>(g + j, n), go = ld<V>(g + H + j, n), gf = ld<V>(g + 2 * H + j, n);
    const reg gc = ld<V>(g + 3 * H + j, n);
    if (p) {
      gi = V::fma(ld<V>(p + j, n), cp, gi);
      gf = V::fma(ld<V>(p + 2 * H + j, n), cp, gf);
    }
    const reg it = sigmoid_v<V>(clip_v<V>(gi, clip));
    const reg ft = input_forget ? V::sub1(it) : sigmoid_v<V>(clip_v<V>(gf, clip));
    const reg ct = tanh_v<V>(clip_v<V>(gc, clip));
    const reg cn = V::fma(ft, cp, V::mul(it, ct));
    if (p) go = V::fma(ld<V>(p + H + j, n), cn, go);
    const reg ot = sigmoid_v<V>(clip_v<V>(go, clip));
    st<V>(c + j, cn, n);
    st<V>(h + j, V::mul(ot, tanh_v<V>(cn)), n);
  });
}

template <class V>
void gru_zr(int64_t H, float* g, const float* h, float* rh, float clip) {
  using reg = typename V::reg;
  for_lanes<V>(H, [&](int64_t j, int n) {
    st<V>(g + j, sigmoid_v<V>(clip_v<V>(ld<V>(g + j, n), clip)), n);
    const reg r = sigmoid_v<V>(clip_v<V>(ld<V>(g + H + j, n), clip));
    st<V>(g + H + j, r, n);
    if (rh) st<V>(rh + j, V::mul(r, ld<V>(h + j, n)), n);
  });
}

template <class V>
void gru_out(int64_t H, const float* g, const float* xh, float* h, float clip) {
  using reg = typename V::reg;
  for_lanes<V>(H, [&](int64_t j, int n) {
    reg pre = ld<V>(g + 2 * H + j, n);
    if (xh) pre = V::fma(ld<V>(g + H + j, n), pre, ld<V>(xh + j, n));
    const reg nt = tanh_v<V>(clip_v<V>(pre, clip));
    const reg z = ld<V>(g + j, n), hp = ld<V>(h + j, n);
    st<V>(h + j, V::fma(z, V::fma(nt, V::set1(-1.0f), hp), nt), n);  // (1 - z) n + z h
  });
}

template <class V>
void rnn_row(int64_t H, const float* g, float* h, float clip) {
  for_lanes<V>(H, [&](int64_t j, int n) { st<V>(h + j, tanh_v<V>(clip_v<V>(ld<V>(g + j, n), clip)), n); });
}

template <class V>
constexpr rnn_detail::RecurrentKernels recurrent_kernels_for() {
  return {&gemv_acc<V>, &lstm_row<V>, &gru_zr<V>, &gru_out<V>, &rnn_row<V>};
}

}  // namespace fusor::FUSOR_SIMD_NS
