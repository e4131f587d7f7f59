#include "kernels/int8/u8_layout.h"

#include <algorithm>

#include "kernels/thread_pool.h"

namespace fusor::int8 {
namespace {

// y[b][j][i] = x[b][i][j] for an R x C matrix per batch, in 32 x 32 tiles.
void transpose_batches(const uint8_t* x, int64_t batches, int64_t rows, int64_t cols, uint8_t* y, ThreadPool* pool) {
  constexpr int64_t T = 32;
  const int64_t row_tiles = (rows + T - 1) / T;
  auto body = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t b = t / row_tiles, i0 = (t % row_tiles) * T, i1 = std::min(rows, i0 + T);
      const uint8_t* xb = x + b * rows * cols;
      uint8_t* yb = y + b * rows * cols;
      for (int64_t j0 = 0; j0 < cols; j0 += T) {
        const int64_t j1 = std::min(cols, j0 + T);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j) yb[j * rows + i] = xb[i * cols + j];
      }
    }
  };
  const int64_t tasks = batches * row_tiles;
  if (pool && tasks > 1 && rows * cols * batches >= (1 << 16)) {
    pool->parallel_for(tasks, body, 1);
  } else {
    body(0, tasks);
  }
}

}  // namespace

void nchw_to_nhwc_u8(const uint8_t* x, int64_t n, int64_t c, int64_t spatial, uint8_t* y, ThreadPool* pool) {
  transpose_batches(x, n, c, spatial, y, pool);
}

void nhwc_to_nchw_u8(const uint8_t* x, int64_t n, int64_t c, int64_t spatial, uint8_t* y, ThreadPool* pool) {
  transpose_batches(x, n, spatial, c, y, pool);
}

}  // namespace fusor::int8
