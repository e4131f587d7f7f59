// The per-ISA panel functions behind kernels/int8/qgemm.h (internal to kernels/int8).
//
// A panel function computes rows [0, m) and columns [0, n) (n <= the ISA's panel width) of C for
// one packed panel of B: kq groups of 4 k-values (AVX2: 2 * kq pairs), then applies the epilogue
// (its arrays already offset to the panel's first column and the rows' first row) and stores.
#pragma once
#include <cstdint>

#include "kernels/int8/qgemm.h"

namespace fusor::int8 {

struct QAmxRows;  // below

using QPanelFn = void (*)(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n,
                          void* c, int64_t ldc, const QEpilogue& ep);

// Columns per panel of an ISA's kernels.
int qpanel_cols(Int8Isa isa);

void qpanel_scalar(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                   int64_t ldc, const QEpilogue& ep);
// AVX2 reads A widened to uint16 (rows lda elements apart, 4 * kq readable): the widening (kp bytes
// per row, kp a multiple of 4) runs once per block of rows for all the panels that read it.
void qpanel_avx2_w16(const uint16_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                     int64_t ldc, const QEpilogue& ep);
void qwiden_rows_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp, uint16_t* w, int64_t ldw);
// qpanel_avx2_w16 for a panel of n <= 8 columns (one vector per row, 12-row tiles).
void qpanel_avx2_w16_half(const uint16_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n,
                          void* c, int64_t ldc, const QEpilogue& ep);
// AVX2 with narrow weights (QPackedB::narrow()): A read as it is, B in the VNNI byte layout, products
// by vpmaddubsw (exact only for such weights: kernels/int8/qgemm_bytes_avx2.cpp).
void qpanel_avx2_bytes(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                       int64_t ldc, const QEpilogue& ep);
// AVX2's split form for a wide B (kernels/int8/qgemm_bytes_avx2.cpp): qsplit_rows_avx2 writes rows
// [0, m) of A (kp bytes each) to lo (ldl apart), the bytes >= 128 of each pair of k with
// a(2i) + a(2i + 1) > 255 with their top bit cleared, and lists their k (row r's at
// hot_k[hot_start[r] .. hot_start[r + 1]), m + 1 starts); false, with lo and the lists unfinished,
// when there are more than max_hot (or kp > 65536). qpanel_avx2_split then computes the panel
// from lo and the lists (byte_panel).
bool qsplit_rows_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp, uint8_t* lo, int64_t ldl,
                      int32_t* hot_start, uint16_t* hot_k, int64_t max_hot);
void qpanel_avx2_split(const uint8_t* lo, int64_t lda, int64_t m, const int8_t* bytes, int64_t kq, int64_t n,
                       const int32_t* hot_start, const uint16_t* hot_k, void* c, int64_t ldc, const QEpilogue& ep);
// The centred form (kernels/int8/qgemm_bytes_avx2.cpp): qcentre_rows_avx2 writes rows [0, m) of A
// (kp bytes each) as d = a - 128, and in each pair of k whose d have one sign and |d| + |d'| > 128
// the bytes with |d| > 64 moved by -+64 and listed (k, with 0x8000 when it went up: d < 0), and
// per row the constant its sums need (row_const); false when more than max_hot are listed (or
// kp > 32768). qpanel_avx2_centred computes a panel from them and the panel's column sums
// (QPackedB::col_sums, n of them). qrows_pairs_fit_avx2: whether no pair of k of rows [0, m) (kp
// each) sums past 255 (the byte kernel can then read them in place).
// The grouped form (the same file): for rows whose every 16 bytes (four k groups) have pair sums
// p0 + p2 + p4 + p6 and p1 + p3 + p5 + p7 both <= 255 (qrows_groups_fit_avx2; bytes past the
// last whole 16 taken pair by pair, so the rows must also pass qrows_pairs_fit_avx2), the plain
// byte kernel with four vpmaddubsw results added in int16 before one vpmaddwd, A read in place.
bool qrows_groups_fit_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp);
void qpanel_avx2_grouped(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n,
                         void* c, int64_t ldc, const QEpilogue& ep);
bool qrows_pairs_fit_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp);
bool qcentre_rows_avx2(const uint8_t* a, int64_t lda, int64_t m, int64_t kp, int8_t* lo, int64_t ldl,
                       int32_t* hot_start, uint16_t* hot_k, int64_t max_hot, int32_t* row_const);
void qpanel_avx2_centred(const int8_t* lo, int64_t lda, int64_t m, const int8_t* bytes, int64_t kq, int64_t n,
                         const int32_t* hot_start, const uint16_t* hot_k, const int32_t* row_const,
                         const int32_t* col_sums, void* c, int64_t ldc, const QEpilogue& ep);
void qpanel_avxvnni(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                    int64_t ldc, const QEpilogue& ep);
void qpanel_avx512vnni(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                       int64_t ldc, const QEpilogue& ep);
// The same with rows given by pointers, each nseg segments of kq / nseg groups of 4 bytes, segment
// s of row i at rows[i] + s * seg_stride (qgemm_rows_segmented); tiles: the rows' AMX tiles from
// qamx_seg_tiles, or null (VNNI alone).
void qpanel_seg_avx512vnni(const uint8_t* const* rows, int64_t nseg, int64_t seg_stride, int64_t m,
                           const int8_t* panel, int64_t kq, int64_t n, void* c, int64_t ldc, const QEpilogue& ep,
                           const QAmxRows* tiles);

// AMX (kernels/int8/qgemm_amx.cpp, only where active_int8_amx()): one A tile of 16 rows, row j at
// base + j * ld; its chunk c (64 bytes: 16 groups of 4 k) at base + (c / cps) * seg_stride +
// (c % cps) * 64 (segments of cps chunks: an implicit conv's kernel rows; one segment: cps >=
// chunks).
struct QAmxRows {
  const uint8_t* base;
  int64_t ld, cps, seg_stride;
};
// The raw sums sum_k A[r, k] * B[k, j] over chunks [0, chunks) for na (1 or 2) row tiles and nv
// (1-4) vectors of 16 columns of a VNNI panel w columns wide, into acc: row r (of 16 * na), column
// j (of 16 * nv) at acc[r * 64 + j].
void qamx_sums(const QAmxRows* a, int na, const int8_t* panel, int64_t w, int nv, int64_t chunks, int32_t* acc);
// Tile configuration for qamx_sums on the calling thread (qamx_begin), and the tiles released
// (qamx_end): around every run of qamx_sums calls, never holding the tile state beyond it.
void qamx_begin();
void qamx_end();

// The AMX tiles of rows [0, m / 16 * 16) of qpanel_seg_avx512vnni's A, one per 16 rows, made once
// for all the panels that read them: read in place where a tile's rows are evenly spaced, else
// gathered into a buffer of the calling thread's (valid until its next call). Null where AMX does
// not apply (not active_int8_amx(), m < 16, K under 128 or segments not whole 64-byte chunks).
const QAmxRows* qamx_seg_tiles(const uint8_t* const* rows, int64_t nseg, int64_t seg_stride, int64_t m, int64_t kq);

// Byte offset of B element (k, column j) inside a panel of width w (columns rounded up to the
// ISA's vector): VNNI/scalar layout [k / 4][w][k % 4]; AVX2 layout [k / 2][w][k % 2] of int16 (the
// VNNI layout for AVX2's narrow weights: pass Int8Isa::AvxVnni for those).
inline int64_t qpanel_offset(Int8Isa isa, int64_t k, int64_t j, int64_t w) {
  if (isa == Int8Isa::Avx2) return ((k / 2) * w + j) * 4 + (k % 2) * 2;
  return ((k / 4) * w + j) * 4 + (k % 4);
}

}  // namespace fusor::int8
