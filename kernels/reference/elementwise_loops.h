// Element loops shared by the elementwise reference kernels (internal to kernels/reference).
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>

#include "core/ir/tensor.h"
#include "kernels/common/broadcast.h"
#include "kernels/thread_pool.h"

namespace fusor {

// Elements per task when a loop is split over a pool: small tensors stay on the caller.
inline constexpr int64_t kElementwiseGrain = 32768;
// Rows shorter than this are walked in runs along the next dim (binary_loop).
inline constexpr int64_t kShortRow = 64;

// Runs body(begin, end) over [0, n): on `pool` in chunks when given and n is large enough.
template <class Body>
void split_elements(ThreadPool* pool, int64_t n, Body&& body) {
  if (!pool || pool->num_threads() <= 1 || n < 2 * kElementwiseGrain) return body(int64_t{0}, n);
  pool->parallel_for(n, [&](int64_t b, int64_t e) { body(b, e); }, kElementwiseGrain);
}

// y[i] = f(x[i]) over all elements. y may alias x. f must be safe to call from several threads
// when a pool is given.
template <class TX, class TY, class F>
void unary_loop(const Tensor& x, Tensor& y, F&& f, ThreadPool* pool = nullptr) {
  const TX* px = x.data<TX>();
  TY* py = y.data<TY>();
  // Pointers and f copied into the body: with everything reached through references, stores to
  // y could alias f's state and the loop would not vectorize.
  split_elements(pool, x.numel(), [px, py, f](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) py[i] = f(px[i]);
  });
}

// y = f(a, b) with multidirectional broadcasting; y has the broadcast shape. y may alias an input
// of the output's size (each output element is written after its own inputs are read).
template <class TA, class TB, class TY, class F>
void binary_loop(const Tensor& a, const Tensor& b, Tensor& y, F&& f, ThreadPool* pool = nullptr) {
  const TA* pa = a.data<TA>();
  const TB* pb = b.data<TB>();
  TY* py = y.data<TY>();
  const int64_t n = y.numel();
  if (n == 0) return;  // (an empty output dim would also make seek_row divide by zero)
  if (a.shape() == y.shape() && b.shape() == y.shape()) {
    split_elements(pool, n, [pa, pb, py, f](int64_t s0, int64_t s1) {
      for (int64_t i = s0; i < s1; ++i) py[i] = f(pa[i], pb[i]);
    });
  } else if (a.shape() == y.shape() && b.numel() == 1) {
    const TB s = pb[0];
    split_elements(pool, n, [pa, py, s, f](int64_t s0, int64_t s1) {
      for (int64_t i = s0; i < s1; ++i) py[i] = f(pa[i], s);
    });
  } else if (b.shape() == y.shape() && a.numel() == 1) {
    const TA s = pa[0];
    split_elements(pool, n, [pb, py, s, f](int64_t s0, int64_t s1) {
      for (int64_t i = s0; i < s1; ++i) py[i] = f(s, pb[i]);
    });
  } else {
    // Row by row: within a row each input is either contiguous (stride 1) or one repeated value.
    // Rows are split between threads, each task seeking its own copy of the index. Short rows
    // (a blocked tensor times a per-channel vector: rows of 16 lanes) are walked a run at a time
    // along the next dim out, with fixed strides, instead of stepping the index every row.
    const BroadcastIndex start(y.shape(), {a.shape(), b.shape()});
    const int64_t len = start.row_length(), sa = start.row_stride(0), sb = start.row_stride(1);
    const int64_t rows = start.num_rows(), outer = start.outer_length();
    const int64_t oa = start.outer_stride(0), ob = start.outer_stride(1);
    auto row = [len, sa, sb, f](const TA* ra, const TB* rb, TY* ry) {
      if (sa == 1 && sb == 1) {
        for (int64_t j = 0; j < len; ++j) ry[j] = f(ra[j], rb[j]);
      } else if (sa == 1 && sb == 0) {
        const TB q = rb[0];
        for (int64_t j = 0; j < len; ++j) ry[j] = f(ra[j], q);
      } else if (sa == 0 && sb == 1) {
        const TA p = ra[0];
        for (int64_t j = 0; j < len; ++j) ry[j] = f(p, rb[j]);
      } else {
        for (int64_t j = 0; j < len; ++j) ry[j] = f(ra[j * sa], rb[j * sb]);
      }
    };
    auto run_rows = [&start, pa, pb, py, len, sa, sb, outer, oa, ob, row, f](int64_t r0, int64_t r1) {
      BroadcastIndex it = start;
      if (len < kShortRow && outer >= 8) {
        for (int64_t r = r0; r < r1;) {
          it.seek_row(r);
          const int64_t k = std::min(r1 - r, outer - r % outer);
          const TA* ra = pa + it.offset(0);
          const TB* rb = pb + it.offset(1);
          TY* ry = py + r * len;
          if (len == 16 && sa == 1 && sb == 1) {
            // 16 lanes: a fixed trip count the compiler unrolls. The lanes go through a local
            // block: y usually aliases an input here (a dying blocked tensor scaled in place), and
            // a loop storing straight to y runs scalar when the compiler's overlap check fails.
            for (int64_t q = 0; q < k; ++q, ra += oa, rb += ob, ry += len) {
              TY t[16];
              for (int64_t j = 0; j < 16; ++j) t[j] = f(ra[j], rb[j]);
              for (int64_t j = 0; j < 16; ++j) ry[j] = t[j];
            }
          } else {
            for (int64_t q = 0; q < k; ++q, ra += oa, rb += ob, ry += len) row(ra, rb, ry);
          }
          r += k;
        }
        return;
      }
      it.seek_row(r0);
      for (int64_t r = r0; r < r1; ++r, it.next_row()) row(pa + it.offset(0), pb + it.offset(1), py + r * len);
    };
    if (!pool || pool->num_threads() <= 1 || n < 2 * kElementwiseGrain) return run_rows(0, rows);
    pool->parallel_for(rows, run_rows, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, len)));
  }
}

}  // namespace fusor
