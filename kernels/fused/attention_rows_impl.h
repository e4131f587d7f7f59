// The row operations of attention_rows.h for one vector type V (kernels/gemm/simd.h). Include
// only from the attention_rows_<isa>.cpp files, after simd.h.
#pragma once
#include <cmath>
#include <limits>

#include "kernels/fused/attention_rows.h"

namespace fusor::FUSOR_SIMD_NS {

template <class V>
float lane_sum(typename V::reg v, int lanes) {
  float x[V::kWidth];
  V::store(x, v);
  float r = 0.0f;
  for (int l = 0; l < lanes; ++l) r += x[l];
  return r;
}

template <class V>
float row_max(const float* s, int64_t n) {
  constexpr int W = V::kWidth;
  const float ninf = -std::numeric_limits<float>::infinity();
  typename V::reg m = V::set1(ninf);
  int64_t j = 0;
  for (; j + W <= n; j += W) m = V::max(m, V::load(s + j));
  float x[W];
  V::store(x, m);
  float r = ninf;
  for (int l = 0; l < W; ++l) r = x[l] > r ? x[l] : r;
  for (; j < n; ++j) r = s[j] > r ? s[j] : r;
  return r;
}

// exp(x - m), exactly 0 where x is -inf (the polynomial clamps its argument at -87.3).
template <class V>
typename V::reg exp_shifted(typename V::reg x, typename V::reg neg_m) {
  const typename V::reg p = V::exp(V::add(x, neg_m));
  return V::lt_select(x, V::set1(std::numeric_limits<float>::lowest()), V::zero(), p);
}

// s[j] = exp(s[j] - m); returns the sum of the new values.
template <class V>
float exp_shifted_sum(float* s, int64_t n, float m) {
  constexpr int W = V::kWidth;
  const typename V::reg neg_m = V::set1(-m);
  typename V::reg acc = V::zero();
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    const typename V::reg p = exp_shifted<V>(V::load(s + j), neg_m);
    V::store(s + j, p);
    acc = V::add(acc, p);
  }
  float r = lane_sum<V>(acc, W);
  if (j < n) {
    const int rest = static_cast<int>(n - j);
    const typename V::reg p = exp_shifted<V>(V::load_n(s + j, rest), neg_m);
    V::store_n(s + j, p, rest);
    r += lane_sum<V>(p, rest);
  }
  return r;
}

template <class V>
float softmax_step(float* s, int64_t n, float& m, float& sum) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const float block_max = row_max<V>(s, n);
  if (block_max == ninf) {
    for (int64_t j = 0; j < n; ++j) s[j] = 0.0f;
    return 1.0f;
  }
  const float m_new = m > block_max ? m : block_max;
  const float corr = m == ninf ? 0.0f : m_new == m ? 1.0f : std::exp(m - m_new);
  sum = sum * corr + exp_shifted_sum<V>(s, n, m_new);
  m = m_new;
  return corr;
}

template <class V>
void scale_row(float* y, int64_t n, float a) {
  constexpr int W = V::kWidth;
  const typename V::reg va = V::set1(a);
  int64_t j = 0;
  for (; j + W <= n; j += W) V::store(y + j, V::mul(V::load(y + j), va));
  if (j < n) V::store_n(y + j, V::mul(V::load_n(y + j, static_cast<int>(n - j)), va), static_cast<int>(n - j));
}

template <class V>
void add_row(float* y, const float* x, int64_t n) {
  constexpr int W = V::kWidth;
  int64_t j = 0;
  for (; j + W <= n; j += W) V::store(y + j, V::add(V::load(y + j), V::load(x + j)));
  if (j < n) {
    const int rest = static_cast<int>(n - j);
    V::store_n(y + j, V::add(V::load_n(y + j, rest), V::load_n(x + j, rest)), rest);
  }
}

template <class V>
fused::attn::RowOps make_row_ops() {
  return {&softmax_step<V>, &scale_row<V>, &add_row<V>};
}

}  // namespace fusor::FUSOR_SIMD_NS
