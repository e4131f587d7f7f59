// The loops of kernels/rowwise/row_ops.h written once over a vector type V (kernels/gemm/simd.h).
// Include only from the per-ISA files, after simd.h.
#pragma once
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

}  // namespace fusor::FUSOR_SIMD_NS
