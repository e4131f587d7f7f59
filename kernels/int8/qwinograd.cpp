#include "kernels/int8/qwinograd.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <new>

#include "core/util/error.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {

namespace {

// G' = 2G of F(2,3) (kernels/winograd/matrices.h: G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]).
constexpr int kG2[4][3] = {{2, 0, 0}, {1, 1, 1}, {1, -1, 1}, {0, 0, 2}};

// Rough rate of the products, multiply-adds of the direct conv per ns (for ThreadPool::threads_for).
constexpr double kMacsPerNs = 150.0;

// V of a group of tiles at most about this many bytes (L2 holds it beside one panel of U).
constexpr int64_t kGroupBytes = 256 * 1024;

}  // namespace

QWinograd::QWinograd(int64_t out_c, int64_t in_c, const std::function<int32_t(int64_t, int64_t, int, int)>& g)
    : out_c_(out_c), in_c_(in_c), kpairs_((in_c + 1) / 2) {
  // The bound of the header: 4 * 255 * sum |g| per output channel.
  for (int64_t oc = 0; oc < out_c; ++oc) {
    int64_t sum = 0;
    for (int64_t c = 0; c < in_c; ++c)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) sum += std::abs(g(oc, c, i, j));
    if (4 * 255 * sum > std::numeric_limits<int32_t>::max()) return;
  }
  const int64_t panels = (out_c + 15) / 16, panel = 16 * kpairs_ * 32;
  // 64-byte aligned (the products load U's vectors aligned).
  const size_t n = static_cast<size_t>(panels * panel);
  auto* mem = static_cast<int16_t*>(::operator new[](n * sizeof(int16_t), std::align_val_t(64)));
  std::fill(mem, mem + n, int16_t{0});
  u_ = std::shared_ptr<int16_t[]>(mem, [](int16_t* q) { ::operator delete[](q, std::align_val_t(64)); });
  int16_t* u = u_.get();
  for (int64_t oc = 0; oc < out_c; ++oc)
    for (int64_t c = 0; c < in_c; ++c) {
      int32_t tmp[4][3] = {}, w[3][3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) w[i][j] = g(oc, c, i, j);
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j)
          for (int k = 0; k < 3; ++k) tmp[i][j] += kG2[i][k] * w[k][j];
      const int64_t p = oc / 16, lane = (oc % 16) / 8 * 16 + (oc % 8) * 2 + c % 2;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          int32_t s = 0;
          for (int k = 0; k < 3; ++k) s += tmp[i][k] * kG2[j][k];
          u[p * panel + ((4 * i + j) * kpairs_ + c / 2) * 32 + lane] = static_cast<int16_t>(s);
        }
    }
}

void QWinograd::run(const Conv2dShape& s, const uint8_t* x, uint8_t flip, int32_t x_zero, const QEpilogue& ep, void* y,
                    ThreadPool* pool, const std::function<void*(size_t)>& scratch) const {
  if (empty() || s.k_h != 3 || s.k_w != 3 || s.stride_h != 1 || s.stride_w != 1 || s.dil_h != 1 || s.dil_w != 1 ||
      s.group != 1 || s.in_c != in_c_ || s.out_c != out_c_ || ep.row_sums)
    throw_internal("QWinograd::run: a conv it was not built for");
  QWinoGeometry g;
  g.batch = s.batch, g.in_c = s.in_c, g.in_h = s.in_h, g.in_w = s.in_w;
  g.out_c = s.out_c, g.out_h = s.out_h, g.out_w = s.out_w, g.pad_t = s.pad_t, g.pad_l = s.pad_l;
  g.tiles_h = (s.out_h + 1) / 2, g.tiles_w = (s.out_w + 1) / 2;
  g.cs = (s.in_c + 15) / 16 * 16, g.kpairs = kpairs_;
  const int64_t T = g.tiles(), tile_bytes = 16 * g.cs * 2, panels = (out_c_ + 15) / 16;
  if (T <= 0 || out_c_ <= 0) return;
  auto* raw = static_cast<uint8_t*>(scratch(static_cast<size_t>(T * tile_bytes) + 64));
  auto* v = reinterpret_cast<int16_t*>((reinterpret_cast<uintptr_t>(raw) + 63) / 64 * 64);
  const double macs = static_cast<double>(s.batch) * s.out_h * s.out_w * 9.0 * s.in_c * s.out_c;
  const int threads = pool ? pool->threads_for(macs / kMacsPerNs) : 1;

  // Tasks of a group of tiles and a range of panels: groups as large as qwino_tiles_avx2 and L2
  // allow (U is read once per group), evened out.
  const int64_t fit = std::clamp<int64_t>(kGroupBytes / tile_bytes, 6, kQWinoMaxTiles);
  const int64_t groups = (T + fit - 1) / fit, per_group = (T + groups - 1) / groups;
  const int64_t want = threads > 1 ? 4 * threads : 1;
  const int64_t chunks = groups < want ? std::min(panels, (want + groups - 1) / groups) : 1;
  const int64_t per_chunk = (panels + chunks - 1) / chunks, tasks = groups * chunks;
  const int16_t* u = u_.get();
  auto input = [&](int64_t t0, int64_t t1) { qwino_input_avx2(g, x, flip, x_zero, t0, t1, v + t0 * 16 * g.cs); };
  if (chunks > 1) {
    // Groups shared by several tasks: every tile transformed first.
    if (threads > 1) {
      pool->parallel_for(T, input, std::max<int64_t>(1, 4096 / tile_bytes));
    } else {
      input(0, T);
    }
  }
  auto work = [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) {
      const int64_t t0 = (k / chunks) * per_group, t1 = std::min(T, t0 + per_group);
      const int64_t p0 = (k % chunks) * per_chunk, p1 = std::min(panels, p0 + per_chunk);
      if (t0 >= t1 || p0 >= p1) continue;
      if (chunks == 1) input(t0, t1);  // a task's own group: its transform is still in L2 for the products
      qwino_tiles_avx2(g, v + t0 * 16 * g.cs, t0, t1, u, p0, p1, ep, y);
    }
  };
  if (threads > 1 && tasks > 1) {
    pool->parallel_for(tasks, work, 1);
  } else {
    work(0, tasks);
  }
}

}  // namespace fusor::int8
