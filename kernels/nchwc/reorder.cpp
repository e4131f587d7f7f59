#include "kernels/nchwc/reorder.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/common/transpose_tile.h"
#include "kernels/thread_pool.h"

namespace fusor {
namespace {

// Runs fn(image, block, row0, row1) over every (image, channel block) and row range; tasks of
// about 16k floats so small tensors stay on one thread.
template <class Fn>
void over_rows(const NchwcShape& s, ThreadPool* pool, Fn fn) {
  const int64_t planes = s.n * s.cb();
  const int64_t row_floats = std::max<int64_t>(1, s.w * s.block);
  const int64_t rows_per_task = std::max<int64_t>(1, std::min<int64_t>(s.h, 16384 / row_floats));
  const int64_t tasks_per_plane = (s.h + rows_per_task - 1) / rows_per_task;
  const int64_t tasks = planes * tasks_per_plane;
  auto body = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t p = t / tasks_per_plane, r0 = (t % tasks_per_plane) * rows_per_task;
      fn(p / s.cb(), p % s.cb(), r0, std::min(s.h, r0 + rows_per_task));
    }
  };
  if (pool && tasks > 1) pool->parallel_for(tasks, body, 1);
  else body(0, tasks);
}

// Pixels per pass of the 4 x 4 tiles: their blocks (64 x 16 floats) stay in L1 while every lane
// quad reads or writes them.
constexpr int64_t kPassPixels = 64;

// Pixels [p0, p1) of one channel block: blocked b[p * B + l] <-> planar d[l * hw + p], lanes
// [0, lanes). to_blocked: d -> b; otherwise b -> d. 4 lanes x 4 pixels at a time
// (transpose_4x4), the ragged lanes and pixels one by one.
template <bool kToBlocked>
void move_block(std::conditional_t<kToBlocked, float*, const float*> b,
                std::conditional_t<kToBlocked, const float*, float*> d, int64_t hw, int64_t B, int64_t lanes, int64_t p0, int64_t p1) {
  for (int64_t q0 = p0; q0 < p1; q0 += kPassPixels) {
    const int64_t q1 = std::min(p1, q0 + kPassPixels);
    int64_t l = 0;
    for (; kHaveTranspose4x4 && l + 4 <= lanes; l += 4) {
      int64_t p = q0;
      for (; p + 4 <= q1; p += 4) {
        if constexpr (kToBlocked) transpose_4x4(d + l * hw + p, hw, b + p * B + l, B);
        else transpose_4x4(b + p * B + l, B, d + l * hw + p, hw);
      }
      for (; p < q1; ++p)
        for (int64_t i = l; i < l + 4; ++i) {
          if constexpr (kToBlocked) b[p * B + i] = d[i * hw + p];
          else d[i * hw + p] = b[p * B + i];
        }
    }
    for (; l < lanes; ++l)
      for (int64_t p = q0; p < q1; ++p) {
        if constexpr (kToBlocked) b[p * B + l] = d[l * hw + p];
        else d[l * hw + p] = b[p * B + l];
      }
  }
}

}  // namespace

void reorder_to_nchwc(const float* x, const NchwcShape& s, float* y, ThreadPool* pool) {
  const int64_t B = s.block, hw = s.h * s.w;
  over_rows(s, pool, [&](int64_t n, int64_t cb, int64_t r0, int64_t r1) {
    const int64_t c0 = cb * B, lanes = std::min(B, s.c - c0);
    const float* xs = x + (n * s.c + c0) * hw;
    float* yb = y + (n * s.cb() + cb) * hw * B;
    move_block<true>(yb, xs, hw, B, lanes, r0 * s.w, r1 * s.w);
    if (lanes < B)
      for (int64_t p = r0 * s.w; p < r1 * s.w; ++p) std::fill(yb + p * B + lanes, yb + (p + 1) * B, 0.0f);
  });
}

void reorder_from_nchwc(const float* x, const NchwcShape& s, float* y, ThreadPool* pool) {
  const int64_t B = s.block, hw = s.h * s.w;
  over_rows(s, pool, [&](int64_t n, int64_t cb, int64_t r0, int64_t r1) {
    const int64_t c0 = cb * B, lanes = std::min(B, s.c - c0);
    const float* xb = x + (n * s.cb() + cb) * hw * B;
    float* ds = y + (n * s.c + c0) * hw;
    move_block<false>(xb, ds, hw, B, lanes, r0 * s.w, r1 * s.w);
  });
}

}  // namespace fusor
