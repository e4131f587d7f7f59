// AVX512-VNNI panel kernel: tiles of MR rows x NV vectors of 16 columns, vpdpbusd with the row's 4
// A bytes broadcast against 16 columns x 4 k of B; the epilogue on the accumulators in registers.
// Tile shapes (NV 4: 5 rows, 3: 8, 2: 8, 1: 16) keep the accumulators, the B vectors and the
// broadcast in the 32 ZMM registers: 12 x 2 and 6 x 4 made GCC spill and copy accumulators in the
// k loop (12 x 2 -> 8 x 2 took mobilenet_v2's stem from 315 to 212 us and its 144 -> 24 1x1 layers
// from 161 to 86 us, bench/qconv_bench); with NV 4 the last 1-4 rows get a tile of their own height.
#include <immintrin.h>

// GCC 12 reports its own _mm512_undefined_*() inside the conversion and min/max intrinsics as
// maybe-uninitialized (as kernels/gemm/simd.h says).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
// The same placeholders, inlined into the 3-vector byte epilogue, warn as -Wuninitialized.
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/int8/qepilogue_avx512.h"
#include "kernels/int8/qgemm_kernels.h"

namespace fusor::int8 {
namespace {

// Every loop over the tile is unrolled completely (the pragmas), so the accumulators live in
// registers: without them GCC keeps acc[][] in a stack array as well and stores all of it on
// every k step, which halves the rate.
//
// BYTES: an 8-bit result (U8/S8, no row sums; RES: with the residual), the common conv epilogue: the
// accumulators start at col_offset; per row, f = acc * mult + add is capped at qmax in float (a
// value below int32's range converts to INT_MIN, which the saturating packs take to the bottom),
// rounded, packed to bytes (vpackssdw, vpackuswb or vpacksswb), put back in column order by one
// vpermd and clamped to [qmin, qmax] on bytes: one store per row instead of one per vector (with
// the residual: resnet18's residual 3x3 layers at 56x56 were 50-100 us slower than the others on
// QEpilogueAvx512's one narrowing store per vector).
//
// SEG: the rows are given by pointers (rp), each row nseg segments of kq / nseg groups of 4 bytes,
// segment s at rp[r] + s * seg_stride (qgemm_rows_segmented: an implicit-GEMM conv, one segment
// per kernel row read in place).
//
// pre: the sums of each segment's first q0 groups, already made by AMX (row r at pre + r * 64),
// added to the accumulators before the loop over the other groups; null: q0 is 0.
template <int MR, int NV, bool BYTES, bool RES = false, bool SEG = false>
void tile(const uint8_t* a, int64_t lda, const uint8_t* const* rp, int64_t nseg, int64_t seg_stride, int64_t m,
          const int8_t* bp, int64_t kq, int64_t w, int64_t n, void* c, int64_t ldc, const QEpilogue& ep,
          const int32_t* pre, int64_t q0) {
  __m512i acc[MR][NV];
  const uint8_t* ar[MR];
  __m512i start[NV];
  __mmask16 lanes[NV];  // the columns of vector v inside the n of the tile
  const int64_t left = n;
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const int64_t l = left - 16 * v;
    lanes[v] = l >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (l > 0 ? l : 0)) - 1);
    start[v] = BYTES ? _mm512_maskz_loadu_epi32(lanes[v], ep.col_offset + 16 * v) : _mm512_setzero_si512();
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    // Rows past m repeat the last one (not stored).
    const int64_t rr = std::min<int64_t>(r, m - 1);
    ar[r] = SEG ? rp[rr] : a + rr * lda;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      acc[r][v] = pre ? _mm512_add_epi32(start[v], _mm512_loadu_si512(pre + rr * 64 + 16 * v)) : start[v];
  }
  const int64_t bstep = w * 4;
  const int64_t segs = SEG ? nseg : 1, skq = SEG ? kq / nseg : kq;
  for (int64_t sg = 0; sg < segs; ++sg) {
    const uint8_t* as[MR];
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) as[r] = ar[r] + (SEG ? sg * seg_stride : 0);
    const int8_t* bs = bp + sg * skq * bstep;
    for (int64_t q = q0; q < skq; ++q) {
      __m512i b[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) b[v] = _mm512_load_si512(bs + q * bstep + v * 64);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        int32_t x;
        std::memcpy(&x, as[r] + q * 4, 4);
        const __m512i bc = _mm512_set1_epi32(x);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], bc, b[v]);
      }
    }
  }
  if constexpr (BYTES) {
    __m512 mul[NV], add[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      mul[v] = _mm512_maskz_loadu_ps(lanes[v], ep.mult + 16 * v);
      add[v] = _mm512_maskz_loadu_ps(lanes[v], ep.add + 16 * v);
    }
    const bool is_signed = ep.out == QEpilogue::Out::S8;
    const __m512 hi = _mm512_set1_ps(static_cast<float>(ep.qmax));
    // RES: the residual Add of a QDQ graph, as QEpilogueAvx512::store does it (the same operations
    // in the same order), before the packing.
    __m512 clo, chi, rt, rz, rc;
    if constexpr (RES) {
      clo = _mm512_set1_ps(static_cast<float>(ep.cmin));
      chi = _mm512_set1_ps(static_cast<float>(ep.cmax));
      rt = _mm512_set1_ps(ep.res_t);
      rz = _mm512_set1_ps(ep.res_z);
      rc = _mm512_set1_ps(ep.res_c);
    }
    const __m512i qmin = _mm512_set1_epi8(static_cast<char>(ep.qmin)), qmax = _mm512_set1_epi8(static_cast<char>(ep.qmax));
    // After the packs, dword d of 128-bit part L holds columns 16d + 4L .. 16d + 4L + 3.
    const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
    const __mmask64 bytes = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      if (r < m) {
        __m512i q[4];
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) {
          __m512 f = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][v]), mul[v], add[v]);
          if constexpr (RES) {
            const __m512 t = _mm512_roundscale_ps(_mm512_min_ps(_mm512_max_ps(f, clo), chi), _MM_FROUND_TO_NEAREST_INT);
            const __m128i rb = _mm_maskz_loadu_epi8(lanes[v], ep.residual + r * ep.residual_ld + 16 * v);
            const __m512i ri = is_signed ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb);
            f = _mm512_fmadd_ps(t, rt, _mm512_fmadd_ps(_mm512_cvtepi32_ps(ri), rz, rc));
          }
          q[v] = _mm512_cvt_roundps_epi32(_mm512_min_ps(f, hi), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        }
#pragma GCC unroll 4
        for (int v = NV; v < 4; ++v) q[v] = q[0];
        const __m512i p01 = _mm512_packs_epi32(q[0], q[1]), p23 = _mm512_packs_epi32(q[2], q[3]);
        __m512i y;
        if (is_signed) {
          y = _mm512_permutexvar_epi32(order, _mm512_packs_epi16(p01, p23));
          y = _mm512_min_epi8(_mm512_max_epi8(y, qmin), qmax);
        } else {
          y = _mm512_permutexvar_epi32(order, _mm512_packus_epi16(p01, p23));
          y = _mm512_min_epu8(_mm512_max_epu8(y, qmin), qmax);
        }
        _mm512_mask_storeu_epi8(static_cast<uint8_t*>(c) + r * ldc, bytes, y);
      }
    }
    return;
  }
  QEpilogueAvx512 e(ep, n);
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) e.load_column(v);
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    if (r < m) {
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) e.store(acc[r][v], r, v, c, ldc);
    }
  }
}

// The rows of A: a + i * lda, or (SEG) rp[i] with segments.
struct ARows {
  const uint8_t* a;
  int64_t lda;
  const uint8_t* const* rp;
  int64_t nseg, seg_stride;
  const QAmxRows* tiles = nullptr;  // SEG with AMX: row i's tile at tiles[i / 16] (qamx_seg_tiles)
};

template <int MR, int NV, bool BYTES, bool RES = false, bool SEG = false>
void rows(const ARows& A, int64_t m, const int8_t* bp, int64_t kq, int64_t w, int64_t n, void* c, int64_t ldc,
          const QEpilogue& ep, const int32_t* pre, int64_t q0) {
  const size_t esize = ep.out == QEpilogue::Out::U8 || ep.out == QEpilogue::Out::S8 ? 1 : 4;
  auto at = [&](int64_t i) { return static_cast<char*>(c) + i * ldc * static_cast<int64_t>(esize); };
  auto run = [&](auto tile_fn, int64_t i, int64_t cnt) {
    tile_fn(A.a + (SEG ? 0 : i * A.lda), A.lda, SEG ? A.rp + i : nullptr, A.nseg, A.seg_stride, cnt, bp, kq, w, n,
            at(i), ldc, ep.offset(i, 0), pre ? pre + i * 64 : nullptr, q0);
  };
  int64_t i = 0;
  for (; i + MR <= m; i += MR) run(tile<MR, NV, BYTES, RES, SEG>, i, MR);
  if (i == m) return;
  // The last rows: with 4 vectors a tile of their own height (a 7x7 map's 49 rows would
  // otherwise compute 54), else a full tile that repeats the last row.
  const int64_t left = m - i;
  if constexpr (NV == 4) {
    switch (left) {
      case 1: return run(tile<1, NV, BYTES, RES, SEG>, i, 1);
      case 2: return run(tile<2, NV, BYTES, RES, SEG>, i, 2);
      case 3: return run(tile<3, NV, BYTES, RES, SEG>, i, 3);
      case 4: return run(tile<4, NV, BYTES, RES, SEG>, i, 4);
      default: break;
    }
  }
  run(tile<MR, NV, BYTES, RES, SEG>, i, left);
}

template <bool BYTES, bool RES = false, bool SEG = false>
void panel_rows(const ARows& A, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c, int64_t ldc,
                const QEpilogue& ep, const int32_t* pre, int64_t q0) {
  const int64_t nv = (n + 15) / 16, w = nv * 16;
  switch (nv) {
    case 4: rows<5, 4, BYTES, RES, SEG>(A, m, panel, kq, w, n, c, ldc, ep, pre, q0); break;
    case 3: rows<8, 3, BYTES, RES, SEG>(A, m, panel, kq, w, n, c, ldc, ep, pre, q0); break;
    case 2: rows<8, 2, BYTES, RES, SEG>(A, m, panel, kq, w, n, c, ldc, ep, pre, q0); break;
    default: rows<16, 1, BYTES, RES, SEG>(A, m, panel, kq, w, n, c, ldc, ep, pre, q0); break;
  }
}

// Whether AMX takes a K of kq groups of 4: two chunks of 16 groups at least (one chunk's sums do
// not pay for their round trip through memory: K = 96 ran slower than on VNNI alone); in nseg
// segments (SEG), segments of whole chunks (the rest of a plain K runs on the VNNI tiles).
bool amx_applies(int64_t kq, int64_t nseg, bool seg) { return kq >= 32 && (!seg || (kq / nseg) % 16 == 0); }

// The AMX tile of 16 rows starting at rp[0] (SEG): read in place when the rows are evenly spaced
// (the pixels of one output row, or of several when the conv's padded input makes them so), else
// gathered into g (16 rows of kq * 4 bytes, the segments of each row one after the other).
QAmxRows seg_tile_of(const uint8_t* const* rp, int64_t nseg, int64_t seg_stride, int64_t kq, int64_t cps, uint8_t* g) {
  const int64_t d = rp[1] - rp[0];
  bool even = d > 0;
  for (int j = 2; j < 16 && even; ++j) even = rp[j] - rp[0] == j * d;
  if (even) return QAmxRows{rp[0], d, cps, seg_stride};
  const int64_t sbytes = kq / nseg * 4, row = kq * 4;
  for (int j = 0; j < 16; ++j)
    for (int64_t sg = 0; sg < nseg; ++sg) std::memcpy(g + j * row + sg * sbytes, rp[j] + sg * seg_stride, sbytes);
  return QAmxRows{g, row, kq / 16, 0};
}

// Rows in whole tiles of 16 through AMX (qamx_sums) for every chunk of 16 groups of 4 k (with
// segments: only when each segment is whole chunks), the rest of K and the epilogue by the tiles
// above from those sums; the last m % 16 rows by the tiles alone. False when K is too short.
template <bool BYTES, bool RES = false, bool SEG = false>
bool amx_panel(const ARows& A, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c, int64_t ldc,
               const QEpilogue& ep) {
  const int64_t nseg = SEG ? A.nseg : 1, skq = kq / nseg;
  if (!amx_applies(kq, nseg, SEG) || (SEG && !A.tiles)) return false;
  const int64_t chunks = kq / 16, cps = chunks, q0 = SEG ? skq : chunks * 16;
  const int nv = static_cast<int>((n + 15) / 16);
  const int64_t w = nv * 16, m16 = m / 16 * 16, esize = ep.out_bytes();
  alignas(64) int32_t acc[32 * 64];
  auto sub = [&](int64_t i) {
    ARows s = A;
    if (SEG) s.rp += i;
    else s.a += i * A.lda;
    return s;
  };
  qamx_begin();
  for (int64_t i = 0; i < m16; i += 32) {
    const int na = m16 - i >= 32 ? 2 : 1;
    QAmxRows ar[2];
    for (int t = 0; t < na; ++t) {
      ar[t] = SEG ? A.tiles[i / 16 + t] : QAmxRows{A.a + (i + 16 * t) * A.lda, A.lda, cps, 0};
    }
    qamx_sums(ar, na, panel, w, nv, chunks, acc);
    panel_rows<BYTES, RES, SEG>(sub(i), 16 * na, panel, kq, n, static_cast<char*>(c) + i * ldc * esize, ldc,
                                ep.offset(i, 0), acc, q0);
  }
  qamx_end();
  if (m16 < m)
    panel_rows<BYTES, RES, SEG>(sub(m16), m - m16, panel, kq, n, static_cast<char*>(c) + m16 * ldc * esize, ldc,
                                ep.offset(m16, 0), nullptr, 0);
  return true;
}

template <bool BYTES, bool RES = false, bool SEG = false>
void panel_fn(const ARows& A, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c, int64_t ldc,
              const QEpilogue& ep) {
  if (m >= 16 && active_int8_amx() && amx_panel<BYTES, RES, SEG>(A, m, panel, kq, n, c, ldc, ep)) return;
  panel_rows<BYTES, RES, SEG>(A, m, panel, kq, n, c, ldc, ep, nullptr, 0);
}

template <bool SEG>
void dispatch(const ARows& A, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c, int64_t ldc,
              const QEpilogue& ep) {
  const bool bytes = (ep.out == QEpilogue::Out::U8 || ep.out == QEpilogue::Out::S8) && !ep.row_sums;
  if (bytes && ep.residual) {
    panel_fn<true, true, SEG>(A, m, panel, kq, n, c, ldc, ep);
  } else if (bytes) {
    panel_fn<true, false, SEG>(A, m, panel, kq, n, c, ldc, ep);
  } else {
    panel_fn<false, false, SEG>(A, m, panel, kq, n, c, ldc, ep);
  }
}

}  // namespace

void qpanel_avx512vnni(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                       int64_t ldc, const QEpilogue& ep) {
  dispatch<false>(ARows{a, lda, nullptr, 1, 0}, m, panel, kq, n, c, ldc, ep);
}

void qpanel_seg_avx512vnni(const uint8_t* const* rows, int64_t nseg, int64_t seg_stride, int64_t m,
                           const int8_t* panel, int64_t kq, int64_t n, void* c, int64_t ldc, const QEpilogue& ep,
                           const QAmxRows* tiles) {
  dispatch<true>(ARows{nullptr, 0, rows, nseg, seg_stride, tiles}, m, panel, kq, n, c, ldc, ep);
}

const QAmxRows* qamx_seg_tiles(const uint8_t* const* rows, int64_t nseg, int64_t seg_stride, int64_t m, int64_t kq) {
  if (m < 16 || !active_int8_amx() || !amx_applies(kq, nseg, true)) return nullptr;
  thread_local std::vector<QAmxRows> tiles;
  thread_local std::vector<uint8_t> gather;
  const int64_t nt = m / 16, tile_bytes = 16 * kq * 4;
  tiles.resize(static_cast<size_t>(nt));
  if (gather.size() < static_cast<size_t>(nt * tile_bytes)) gather.resize(static_cast<size_t>(nt * tile_bytes));
  for (int64_t t = 0; t < nt; ++t)
    tiles[t] = seg_tile_of(rows + 16 * t, nseg, seg_stride, kq, kq / nseg / 16, gather.data() + t * tile_bytes);
  return tiles.data();
}

}  // namespace fusor::int8
