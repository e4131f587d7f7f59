// AMX sums for the AVX512-VNNI panels (kernels/int8/qgemm_kernels.h, qamx_sums): tdpbusd on tiles
// of 16 rows x 64 bytes. An A tile is 16 rows of A, 64 bytes (16 groups of 4 k) each, read in
// place with the rows' stride; a B tile is 16 groups of 4 k of 16 columns of a VNNI panel, which
// is exactly the panel's layout ([k / 4][w][k % 4]: a group's 16 columns are 64 contiguous bytes,
// the next group w * 4 bytes further), so the packed weights serve both kernels unchanged. Up to
// 2 x 2 accumulator tiles (32 rows x 32 columns) per pass, the 2 A and 2 B tiles in the other
// four registers: one tdpbusd does 16 x 16 x 64 multiply-adds.
//
// The tile configuration is loaded at the start of each panel call and the tiles released at its
// end (qamx_begin / qamx_end): another library on the same thread (oneDNN under PyTorch, say) may
// configure tiles differently or release them between our calls, and a tile instruction without
// the configuration faults.
#include <immintrin.h>

#include <cstring>

#include "kernels/int8/qgemm_kernels.h"

namespace fusor::int8 {
namespace {

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Every tile 16 rows of 64 bytes. A constant in memory: built on the stack, its stores were
// dropped by GCC 12, which does not see that ldtilecfg reads them (the tiles then faulted).
constexpr TileConfig make_config() {
  TileConfig c;
  for (int t = 0; t < 8; ++t) {
    c.colsb[t] = 64;
    c.rows[t] = 16;
  }
  return c;
}
constexpr TileConfig kConfig = make_config();

}  // namespace

void qamx_begin() { _tile_loadconfig(&kConfig); }

void qamx_end() { _tile_release(); }

namespace {

inline const uint8_t* chunk_at(const QAmxRows& r, int64_t c) {
  return r.base + (c / r.cps) * r.seg_stride + (c % r.cps) * 64;
}

// Tiles 0-3: accumulators (row tile i, column tile j at 2 * i + j); 4, 5: A; 6, 7: B.
template <int NA, int NB>
void pass(const QAmxRows* a, const int8_t* b, int64_t bstep, int64_t chunks, int32_t* acc) {
  _tile_zero(0);
  if constexpr (NB > 1) _tile_zero(1);
  if constexpr (NA > 1) _tile_zero(2);
  if constexpr (NA > 1 && NB > 1) _tile_zero(3);
  const int64_t bchunk = 16 * bstep;
  for (int64_t c = 0; c < chunks; ++c) {
    const int8_t* bc = b + c * bchunk;
    _tile_loadd(4, chunk_at(a[0], c), a[0].ld);
    _tile_loadd(6, bc, bstep);
    _tile_dpbusd(0, 4, 6);
    if constexpr (NB > 1) {
      _tile_loadd(7, bc + 64, bstep);
      _tile_dpbusd(1, 4, 7);
    }
    if constexpr (NA > 1) {
      _tile_loadd(5, chunk_at(a[1], c), a[1].ld);
      _tile_dpbusd(2, 5, 6);
      if constexpr (NB > 1) _tile_dpbusd(3, 5, 7);
    }
  }
  constexpr int64_t ld = 64 * sizeof(int32_t);
  _tile_stored(0, acc, ld);
  if constexpr (NB > 1) _tile_stored(1, acc + 16, ld);
  if constexpr (NA > 1) _tile_stored(2, acc + 16 * 64, ld);
  if constexpr (NA > 1 && NB > 1) _tile_stored(3, acc + 16 * 64 + 16, ld);
}

}  // namespace

void qamx_sums(const QAmxRows* a, int na, const int8_t* panel, int64_t w, int nv, int64_t chunks, int32_t* acc) {
  const int64_t bstep = w * 4;
  for (int v = 0; v < nv; v += 2) {
    const int8_t* b = panel + v * 64;
    int32_t* out = acc + v * 16;
    const bool two = v + 1 < nv;
    if (na > 1) {
      two ? pass<2, 2>(a, b, bstep, chunks, out) : pass<2, 1>(a, b, bstep, chunks, out);
    } else {
      two ? pass<1, 2>(a, b, bstep, chunks, out) : pass<1, 1>(a, b, bstep, chunks, out);
    }
  }
}

}  // namespace fusor::int8
