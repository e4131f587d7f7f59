#include "kernels/nchwc/reorder.h"

#include <algorithm>
#include <cstring>

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

}  // namespace

void reorder_to_nchwc(const float* x, const NchwcShape& s, float* y, ThreadPool* pool) {
  const int64_t B = s.block, hw = s.h * s.w;
  over_rows(s, pool, [&](int64_t n, int64_t cb, int64_t r0, int64_t r1) {
    const int64_t c0 = cb * B, lanes = std::min(B, s.c - c0);
    const float* xs = x + (n * s.c + c0) * hw;
    float* yb = y + (n * s.cb() + cb) * hw * B;
    for (int64_t p = r0 * s.w; p < r1 * s.w; ++p) {
      float* d = yb + p * B;
      for (int64_t l = 0; l < lanes; ++l) d[l] = xs[l * hw + p];
      for (int64_t l = lanes; l < B; ++l) d[l] = 0.0f;
    }
  });
}

void reorder_from_nchwc(const float* x, const NchwcShape& s, float* y, ThreadPool* pool) {
  const int64_t B = s.block, hw = s.h * s.w;
  over_rows(s, pool, [&](int64_t n, int64_t cb, int64_t r0, int64_t r1) {
    const int64_t c0 = cb * B, lanes = std::min(B, s.c - c0);
    const float* xb = x + (n * s.cb() + cb) * hw * B;
    float* ds = y + (n * s.c + c0) * hw;
    for (int64_t l = 0; l < lanes; ++l) {
      float* d = ds + l * hw;
      for (int64_t p = r0 * s.w; p < r1 * s.w; ++p) d[p] = xb[p * B + l];
    }
  });
}

}  // namespace fusor
