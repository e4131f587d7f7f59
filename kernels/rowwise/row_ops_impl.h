// The loops of kernels/rowwise/row_ops.h written once over a vector type V (kernels/gemm/simd.h).
// Include only from the per-ISA files, after simd.h.
#pragma once
#include <array>
#include <cmath>
#include <utility>

#include "kernels/rowwise/row_ops.h"

namespace fusor::FUSOR_SIMD_NS {

// The float sum of n elements given by lanes(i) (a full vector at i) and tail(i, r) (the last r < W),
// in four accumulators over runs of 4 W, then across lanes: row_sum and row_add_sum share it, so
// they give the same float for the same elements.
template <class V, class Lanes, class Tail>
float sum_lanes(int64_t n, Lanes lanes, Tail tail) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  reg a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    a0 = V::add(a0, lanes(i));
    a1 = V::add(a1, lanes(i + W));
    a2 = V::add(a2, lanes(i + 2 * W));
    a3 = V::add(a3, lanes(i + 3 * W));
  }
  for (; i + W <= n; i += W) a0 = V::add(a0, lanes(i));
  if (i < n) a1 = V::add(a1, tail(i, static_cast<int>(n - i)));
  float out[W];
  V::store(out, V::add(V::add(a0, a1), V::add(a2, a3)));
  float s = 0.0f;
  for (int k = 0; k < W; ++k) s += out[k];
  return s;
}

template <class V>
float row_sum(const float* x, int64_t n) {
  return sum_lanes<V>(n, [x](int64_t i) { return V::load(x + i); },
                      [x](int64_t i, int r) { return V::load_n(x + i, r); });
}

// s = x + k (+ b), returning row_sum(s).
template <class V>
float row_add_sum(const float* x, const float* k, const float* b, float* s, int64_t n) {
  return sum_lanes<V>(
      n,
      [=](int64_t i) {
        typename V::reg v = V::add(V::load(x + i), V::load(k + i));
        if (b) v = V::add(v, V::load(b + i));
        V::store(s + i, v);
        return v;
      },
      [=](int64_t i, int r) {
        typename V::reg v = V::add(V::load_n(x + i, r), V::load_n(k + i, r));
        if (b) v = V::add(v, V::load_n(b + i, r));
        V::store_n(s + i, v, r);
        return v;
      });
}

template <class V>
void row_softmax(const float* x, float* y, int64_t n) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  if (n <= 0) return;
  float mx = x[0];
  {
    reg m = V::set1(x[0]);
    int64_t i = 0;
    for (; i + W <= n; i += W) m = V::max(m, V::load(x + i));
    float lanes[W];
    V::store(lanes, m);
    for (int k = 0; k < W; ++k) mx = lanes[k] > mx ? lanes[k] : mx;
    for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  }
  const reg vm = V::set1(mx);
  reg acc = V::zero();
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const reg e = V::exp(V::sub(V::load(x + i), vm));
    V::store(y + i, e);
    acc = V::add(acc, e);
  }
  float s = 0.0f;
  if (i < n) {
    const int r = static_cast<int>(n - i);
    const reg e = V::exp(V::sub(V::load_n(x + i, r), vm));
    V::store_n(y + i, e, r);
    float lanes[W];
    V::store(lanes, e);
    for (int k = 0; k < r; ++k) s += lanes[k];
  }
  float lanes[W];
  V::store(lanes, acc);
  for (int k = 0; k < W; ++k) s += lanes[k];
  const reg inv = V::set1(1.0f / s);
  for (i = 0; i + W <= n; i += W) V::store(y + i, V::mul(V::load(y + i), inv));
  if (i < n) V::store_n(y + i, V::mul(V::load_n(y + i, static_cast<int>(n - i)), inv), static_cast<int>(n - i));
}

template <class V>
float row_sq_dev(const float* x, int64_t n, float m) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  const reg vm = V::set1(m);
  reg a0 = V::zero(), a1 = V::zero();
  int64_t i = 0;
  for (; i + 2 * W <= n; i += 2 * W) {
    const reg d0 = V::sub(V::load(x + i), vm), d1 = V::sub(V::load(x + i + W), vm);
    a0 = V::fma(d0, d0, a0);
    a1 = V::fma(d1, d1, a1);
  }
  for (; i + W <= n; i += W) {
    const reg d = V::sub(V::load(x + i), vm);
    a0 = V::fma(d, d, a0);
  }
  float s = 0.0f;
  for (; i < n; ++i) s += (x[i] - m) * (x[i] - m);
  float lanes[W];
  V::store(lanes, V::add(a0, a1));
  for (int k = 0; k < W; ++k) s += lanes[k];
  return s;
}

template <class V>
void row_normalize(const float* x, float* y, int64_t n, float m, float inv, const float* scale, const float* shift) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  const reg vm = V::set1(m), vi = V::set1(inv);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    reg v = V::mul(V::mul(V::sub(V::load(x + i), vm), vi), V::load(scale + i));
    if (shift) v = V::add(v, V::load(shift + i));
    V::store(y + i, v);
  }
  if (i < n) {
    const int r = static_cast<int>(n - i);
    reg v = V::mul(V::mul(V::sub(V::load_n(x + i, r), vm), vi), V::load_n(scale + i, r));
    if (shift) v = V::add(v, V::load_n(shift + i, r));
    V::store_n(y + i, v, r);
  }
}

// ---- one whole row of LayerNorm / SkipLayerNorm / RMSNorm ----

// f(B) + ... + f(B + N - 1) as a balanced tree, the indices compile-time constants so an array
// f reads from stays in registers (a loop over a halving stride kept it on the stack).
template <class V, int B, int N, class F>
inline typename V::reg tree(const F& f) {
  if constexpr (N == 1) return f(B);
  else return V::add(tree<V, B, N / 2>(f), tree<V, B + N / 2, N - N / 2>(f));
}

// The row in NV registers, (NV - 1) W < n <= NV W: read once, written once (y, and s when
// wanted); the sums are trees, so rows of a few hundred elements are not bound by a chain of
// dependent additions (the pass-per-statistic form spent most of its time in them).
template <class V, int NV>
void norm_row_regs(const float* x, const float* k, const float* b, float* s, float* y, int64_t n,
                   const float* scale, const float* shift, float eps, bool center) {
  using reg = typename V::reg;
  constexpr int W = V::kWidth;
  const int last = static_cast<int>(n - (NV - 1) * W);
  auto ld = [last](const float* p, int j) {
    return j == NV - 1 && last < W ? V::load_n(p + j * W, last) : V::load(p + j * W);
  };
  auto st = [last](float* p, int j, reg v) {
    if (j == NV - 1 && last < W) V::store_n(p + j * W, v, last);
    else V::store(p + j * W, v);
  };
  reg v[NV];
#pragma GCC unroll 32
  for (int j = 0; j < NV; ++j) {
    v[j] = ld(x, j);
    if (k) {  // b only with k, as the passes below
      v[j] = V::add(v[j], ld(k, j));
      if (b) v[j] = V::add(v[j], ld(b, j));
    }
    if (s) st(s, j, v[j]);
  }
  const float mean = center ? V::hsum(tree<V, 0, NV>([&](int j) { return v[j]; })) / static_cast<float>(n) : 0.0f;
  const reg vm = V::set1(mean);
  reg d[NV];
#pragma GCC unroll 32
  for (int j = 0; j < NV; ++j) d[j] = V::sub(v[j], vm);
  if (last < W) {  // lanes past n (loaded as 0) out of the deviations
    alignas(64) static constexpr float kIota[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    d[NV - 1] = V::lt_select(V::load(kIota), V::set1(static_cast<float>(last)), d[NV - 1], V::zero());
  }
  const float sq = V::hsum(tree<V, 0, NV>([&](int j) { return V::mul(d[j], d[j]); }));
  const float inv = 1.0f / std::sqrt(sq / static_cast<float>(n) + eps);
  const reg vi = V::set1(inv);
#pragma GCC unroll 32
  for (int j = 0; j < NV; ++j) {
    reg o = V::mul(V::mul(d[j], vi), ld(scale, j));
    if (shift) o = V::add(o, ld(shift, j));
    st(y, j, o);
  }
}

using NormRowFn = void (*)(const float*, const float*, const float*, float*, float*, int64_t, const float*,
                           const float*, float, bool);

template <class V, int... I>
constexpr auto norm_row_table(std::integer_sequence<int, I...>) {
  return std::array<NormRowFn, sizeof...(I)>{&norm_row_regs<V, I + 1>...};
}

// Rows up to kMaxVecs registers in registers, longer ones by the passes above (their sums in
// lanes then across, as row_sum / row_sq_dev give them).
template <class V, int kMaxVecs>
void row_norm(const float* x, const float* k, const float* b, float* s, float* y, int64_t n, const float* scale,
              const float* shift, float eps, bool center) {
  constexpr int W = V::kWidth;
  if constexpr (kMaxVecs > 0) {
    static constexpr auto table = norm_row_table<V>(std::make_integer_sequence<int, kMaxVecs>{});
    if (n > 0 && n <= kMaxVecs * W) return table[(n + W - 1) / W - 1](x, k, b, s, y, n, scale, shift, eps, center);
  }
  const float* src = x;
  float total = 0.0f;
  if (k) {
    float* t = s ? s : y;  // the input row kept in S when wanted, else in Y until overwritten
    total = row_add_sum<V>(x, k, b, t, n);
    src = t;
  } else if (center) {
    total = row_sum<V>(x, n);
  }
  const float mean = center ? total / static_cast<float>(n) : 0.0f;
  const float inv = 1.0f / std::sqrt(row_sq_dev<V>(src, n, mean) / static_cast<float>(n) + eps);
  row_normalize<V>(src, y, n, mean, inv, scale, shift);
}

}  // namespace fusor::FUSOR_SIMD_NS
