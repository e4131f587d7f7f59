#include "kernels/int8/qwinograd.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <new>

#include "core/util/error.h"
#include "kernels/common/slot_tasks.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {

namespace {

// The integer filter transforms (kernels/int8/qwinograd.h), written out in qwino_filters_avx2:
// G' = 2G of F(2,3) = [2 0 0; 1 1 1; 1 -1 1; 0 0 2], and D G of F(4,3) =
// [1 0 0; -1 -1 -1; -1 1 -1; 1 2 4; 1 -2 4; 0 0 1].

// Rough rate of the products, multiply-adds of the direct conv per ns (for ThreadPool::threads_for).
constexpr double kMacsPerNs = 150.0;

// V of a group of tiles at most about this many bytes (L2 holds it beside one panel of U).
constexpr int64_t kGroupBytes = 256 * 1024;

// F(4,3) where U stays small: in_c * out_c at most this. ResNet-18's 56x56 and 28x28 layers (64
// and 128 channels); at 14x14 x 256 (U 4.7 MB, tiles of 4x4 covering 16x16) it was no faster in
// the model than F(2,3), and at 7x7 x 512 U would be 19 MB per call for 4 tiles.
constexpr int64_t kF4MaxChannelProduct = 128 * 128;

}  // namespace

QWinograd::QWinograd(int64_t out_c, int64_t in_c, const int16_t* g, int tile)
    : out_c_(out_c), in_c_(in_c), kpairs_((in_c + 1) / 2) {
  // The bounds of the header, per output channel: F(2,3) 4 * 255 * sum |g| < 2^31, F(4,3)
  // 255 * sum |g| < 2^25.
  int64_t most = 0;
  const int64_t per_oc = in_c * 9;
  for (int64_t oc = 0; oc < out_c; ++oc) {
    int64_t sum = 0;
    for (int64_t i = 0; i < per_oc; ++i) sum += std::abs(static_cast<int32_t>(g[oc * per_oc + i]));
    most = std::max(most, sum);
  }
  const bool fits2 = 4 * 255 * most <= std::numeric_limits<int32_t>::max();
  const bool fits4 = 255 * most < (int64_t{1} << 25);
  if (tile == 4 || (tile == 0 && in_c * out_c <= kF4MaxChannelProduct)) {
    m_ = fits4 ? 4 : tile == 4 ? 0 : 2;
  } else {
    m_ = tile == 2 || tile == 0 ? 2 : 0;
  }
  if (m_ == 2 && !fits2) m_ = 0;
  if (m_ == 0) return;
  const int a = m_ + 2, positions = a * a;
  const int64_t panels = (out_c + 15) / 16, panel = positions * kpairs_ * 32;
  // 64-byte aligned (the products load U's vectors aligned).
  const size_t n = static_cast<size_t>(panels * panel);
  auto* mem = static_cast<int16_t*>(::operator new[](n * sizeof(int16_t), std::align_val_t(64)));
  u_ = std::shared_ptr<int16_t[]>(mem, [](int16_t* q) { ::operator delete[](q, std::align_val_t(64)); });
  // (Every 64-byte row of every panel is written, zeros for missing channels included. Element by
  // element, the transforms were a third of resnet18_qdq's session start.)
  qwino_filters_avx2(g, out_c, in_c, m_, kpairs_, panel, mem);
}

void QWinograd::run(const Conv2dShape& s, const uint8_t* x, uint8_t flip, int32_t x_zero, const QEpilogue& ep, void* y,
                    ThreadPool* pool, const std::function<void*(size_t)>& scratch) const {
  if (empty() || s.k_h != 3 || s.k_w != 3 || s.stride_h != 1 || s.stride_w != 1 || s.dil_h != 1 || s.dil_w != 1 ||
      s.group != 1 || s.in_c != in_c_ || s.out_c != out_c_ || ep.row_sums)
    throw_internal("QWinograd::run: a conv it was not built for");
  QWinoGeometry g;
  g.batch = s.batch, g.in_c = s.in_c, g.in_h = s.in_h, g.in_w = s.in_w;
  g.out_c = s.out_c, g.out_h = s.out_h, g.out_w = s.out_w, g.pad_t = s.pad_t, g.pad_l = s.pad_l;
  g.m = m_;
  g.tiles_h = (s.out_h + m_ - 1) / m_, g.tiles_w = (s.out_w + m_ - 1) / m_;
  g.cs = (s.in_c + 15) / 16 * 16, g.kpairs = kpairs_;
  const int64_t T = g.tiles(), P = g.positions(), tile_bytes = P * g.cs * 2, panels = (out_c_ + 15) / 16;
  if (T <= 0 || out_c_ <= 0) return;
  const double macs = static_cast<double>(s.batch) * s.out_h * s.out_w * 9.0 * s.in_c * s.out_c;
  const int threads = pool ? pool->threads_for(macs / kMacsPerNs) : 1;

  // Tasks of a group of tiles and a range of panels: groups as large as qwino_tiles_avx2 and L2
  // allow (U is read once per group), evened out.
  const int64_t fit = std::clamp<int64_t>(kGroupBytes / tile_bytes, 6, kQWinoBufferTiles / P);
  const int64_t groups = (T + fit - 1) / fit, per_group = (T + groups - 1) / groups;
  const int64_t want = threads > 1 ? 4 * threads : 1;
  const int64_t chunks = groups < want ? std::min(panels, (want + groups - 1) / groups) : 1;
  const int64_t per_chunk = (panels + chunks - 1) / chunks, tasks = groups * chunks;
  const int slots = static_cast<int>(std::min<int64_t>(threads, tasks));
  // Scratch: V of every tile, then one products buffer per slot (kQWinoBufferTiles x 16 int32).
  const size_t v_bytes = (static_cast<size_t>(T * tile_bytes) + 63) / 64 * 64;
  const size_t m_bytes = static_cast<size_t>(kQWinoBufferTiles) * 16 * sizeof(int32_t);
  auto* raw = static_cast<uint8_t*>(scratch(v_bytes + m_bytes * static_cast<size_t>(slots) + 64));
  auto* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 63) / 64 * 64);
  auto* v = reinterpret_cast<int16_t*>(base);
  const int16_t* u = u_.get();
  auto input = [&](int64_t t0, int64_t t1) { qwino_input_avx2(g, x, flip, x_zero, t0, t1, v + t0 * P * g.cs); };
  if (chunks > 1) {
    // Groups shared by several tasks: every tile transformed first.
    if (threads > 1) {
      pool->parallel_for(T, input, std::max<int64_t>(1, 4096 / tile_bytes));
    } else {
      input(0, T);
    }
  }
  SlotTasks slot_tasks(tasks, slots);
  auto work = [&](int64_t s0, int64_t s1) {
    for (int64_t slot = s0; slot < s1; ++slot) {
      auto* m = reinterpret_cast<int32_t*>(base + v_bytes + static_cast<size_t>(slot) * m_bytes);
      slot_tasks.run(static_cast<int>(slot), [&](int64_t k) {
        const int64_t t0 = (k / chunks) * per_group, t1 = std::min(T, t0 + per_group);
        const int64_t p0 = (k % chunks) * per_chunk, p1 = std::min(panels, p0 + per_chunk);
        if (t0 >= t1 || p0 >= p1) return;
        if (chunks == 1) input(t0, t1);  // a task's own group: its transform is still in L2 for the products
        qwino_tiles_avx2(g, v + t0 * P * g.cs, t0, t1, u, p0, p1, ep, y, m);
      });
    }
  };
  if (slots > 1) {
    pool->parallel_for_slots(slots, work);
  } else {
    work(0, 1);
  }
}

}  // namespace fusor::int8
