// The per-ISA half of the attention core (flash_attention.h): one task's work, a tile of query
// rows of one (batch, head) against all its keys, and the K transposition. Defined once over a
// vector type in flash_attention_impl.h and compiled per ISA (flash_attention_<isa>.cpp).
#pragma once
#include <cstdint>

#include "kernels/cpu_features.h"

namespace fusor::fused::flash {

// Keys per panel of the K^T copy (d x kKeyBlock floats, contiguous) and per scores-kernel call.
inline constexpr int kKeyBlock = 64;
// Keys per online-softmax step at most: a register tile's scores for that many keys are kept whole
// (MR x chunk floats of the workspace), so up to this sequence length no row is ever rescaled.
inline constexpr int64_t kMaxChunk = 512;

// Keys per softmax step for `keys` keys: all of them (rounded up to a key block) up to kMaxChunk.
inline int64_t chunk_keys(int64_t keys) {
  const int64_t rounded = (keys + kKeyBlock - 1) / kKeyBlock * kKeyBlock;
  return rounded < kMaxChunk ? rounded : kMaxChunk;
}

struct TileArgs {
  const float* q = nullptr;  // row r at q + r * ldq
  int64_t ldq = 0;
  float* y = nullptr;        // row r at y + r * ldy (dv values, overwritten)
  int64_t ldy = 0;
  int64_t rows = 0;
  // K^T by blocks of kKeyBlock keys: column c, key b * kKeyBlock + j at kt[b * kt_block + c * ldkt + j].
  const float* kt = nullptr;
  int64_t ldkt = 0, kt_block = 0;
  const float* v = nullptr;   // key j's values at v + j * ldv
  int64_t ldv = 0;
  int64_t keys = 0, d = 0, dv = 0;
  float scale = 1.0f;
  // Row r, key j of the mask at fmask / bmask [r * mask_row + j * mask_col] (at most one set).
  const float* fmask = nullptr;
  const bool* bmask = nullptr;
  int64_t mask_row = 0, mask_col = 0;
  bool causal = false;
  int64_t causal_first = 0;  // with causal, row r sees keys j <= causal_first + r
  int64_t chunk = kKeyBlock;  // chunk_keys(keys)
  float* work = nullptr;      // work_floats(rows, mr, chunk, d) floats
};

inline int64_t work_floats(int64_t rows, int mr, int64_t chunk, int64_t d) { return mr * (chunk + d) + 2 * rows + 16; }

struct TileFns {
  int mr = 1;  // query rows per register tile
  void (*attend)(const TileArgs& a) = nullptr;
  // dst[c * ld + j] = k[j * key + c * dim] for keys j < n, columns c < d.
  void (*transpose_k)(const float* k, int64_t key, int64_t dim, int64_t n, int64_t d, float* dst, int64_t ld) = nullptr;
};

const TileFns& tile_fns(Isa isa);
TileFns tile_fns_avx512();
TileFns tile_fns_avx2();
TileFns tile_fns_scalar();

}  // namespace fusor::fused::flash
