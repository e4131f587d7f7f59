// Element loops shared by the elementwise reference kernels (internal to kernels/reference).
#pragma once
#include <cstdint>
#include <utility>

#include "engine/ir/tensor.h"
#include "kernels/common/broadcast.h"

namespace fusor {

// y[i] = f(x[i]) over all elements. y may alias x.
template <class TX, class TY, class F>
void unary_loop(const Tensor& x, Tensor& y, F&& f) {
  const TX* px = x.data<TX>();
  TY* py = y.data<TY>();
  const int64_t n = x.numel();
  for (int64_t i = 0; i < n; ++i) py[i] = f(px[i]);
}

// y = f(a, b) with multidirectional broadcasting; y has the broadcast shape. y may alias an input
// of the output's size (each output element is written after its own inputs are read).
template <class TA, class TB, class TY, class F>
void binary_loop(const Tensor& a, const Tensor& b, Tensor& y, F&& f) {
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TY* py = y.data<TY>();
  const int64_t n = y.numel();
  if (a.shape() == y.shape() && b.shape() == y.shape()) {
    for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i], pb[i]);
  } else if (a.shape() == y.shape() && b.numel() == 1) {
    const TB s = pb[0];
    for (int64_t i = 0; i < n; ++i) py[i] = f(pa[i], s);
  } else if (b.shape() == y.shape() && a.numel() == 1) {
    const TA s = pa[0];
    for (int64_t i = 0; i < n; ++i) py[i] = f(s, pb[i]);
  } else {
    BroadcastIndex it(y.shape(), {a.shape(), b.shape()});
    for (int64_t i = 0; i < n; ++i, it.next()) py[i] = f(pa[it.offset(0)], pb[it.offset(1)]);
  }
}

}  // namespace fusor
