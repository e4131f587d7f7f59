// Depthwise int8 convolution on NHWC data (internal to kernels/int8; QConvWeights::run picks it):
// for output rows [row0, row1) (row = n * out_h + oh), every pixel's channels are
//     acc[c] = sum over taps of x[tap][c] * w[tap][c]   (w with its zero point removed)
// with padded taps reading X's zero point, then the epilogue (one epilogue row per pixel, its
// col_offset holding bias - x_zero * sum_t w[t][c]).
//
// Two AVX-512 forms. qdepthwise_avx512: one tap per vpdpwssd (any weights). qdepthwise4_avx512
// (weights that fit int8 once their zero point is removed, the quantize_static form): four
// horizontal taps of a kernel row per vpdpbusd. Each input row the outputs read is first turned
// into a "tap row" (QDepthwise4 below): per output column, per group of 4 taps, 64 channels as
// 4 vectors whose 32-bit lanes hold the 4 taps' bytes of one channel, built with unpacks (lane
// k of 128-bit part L of vector v holds channel 16L + 4v + k). A tap row serves every output row
// whose window covers that input row (a ring of them per thread), so a 3x3 kernel costs 3
// vpdpbusd per 16 outputs. The weights and the epilogue's per-channel constants are stored in the
// same channel order, and the packs that turn 4 vectors of int32 into 64 bytes undo it.
//
// One AVX2 form (Avx2 and AvxVnni machines), qdepthwise_avx2: 16 channels of a tap's pixel widened
// to int16 (vpmovzxbw / vpmovsxbw) and multiplied by two vpmaddwd against the tap's weights as
// int16 with every other lane 0 (QDepthwiseAvx2 below), so each 32-bit lane gets exactly one
// product x * w of one channel, even channels in one accumulator and odd ones in the other. Exact
// for any weights that fit int16 (no 16-bit pair sums: vpmaddubsw's would saturate).
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/conv/conv.h"
#include "kernels/int8/qgemm.h"

namespace fusor::int8 {

struct QDepthwiseArgs {
  const Conv2dShape* s = nullptr;
  const uint8_t* x = nullptr;   // N, H, W, C (int8 when signed_act)
  const uint8_t* z = nullptr;   // the residual, shaped like y, or null
  uint8_t* y = nullptr;         // N, OH, OW, C of the epilogue's output type (floats for F32)
  const int32_t* weights = nullptr;  // [tap][w_stride]
  int64_t w_stride = 0;
  int32_t x_zero = 0;
  bool signed_act = false;
  QEpilogue ep;                 // residual_ld = C when z is given
};

void qdepthwise_scalar(const QDepthwiseArgs& a, int64_t row0, int64_t row1);
void qdepthwise_avx512(const QDepthwiseArgs& a, int64_t row0, int64_t row1);

// The weights and constants of qdepthwise4_avx512, in its channel order, per block of 64 channels.
struct QDepthwise4 {
  int64_t channels = 0, blocks = 0, k_h = 0, k_w = 0, groups = 0;  // groups: of 4 taps per kernel row
  std::vector<int8_t> w;         // [kh][group][block][4 vectors][16 lanes][4 taps]
  std::vector<int32_t> offset;   // [block][64]: col_offset, minus 128 * sum_t w for int8 inputs
  std::vector<float> mult, add;  // [block][64]
  bool clamp_in_float = false;   // a rounded result might not fit int32: clamp before converting

  // From [tap][stride] int32 weights (zero point removed) and the epilogue's per-channel arrays;
  // empty() when a weight does not fit int8.
  QDepthwise4(int64_t channels, int64_t k_h, int64_t k_w, const int32_t* weights, int64_t stride, const QEpilogue& ep,
              bool signed_act);
  QDepthwise4() = default;
  bool empty() const { return w.empty(); }
  // Scratch of one thread: ring_rows tap rows of tap_row_bytes each.
  int64_t ring_rows(int64_t dil_h) const { return (k_h - 1) * dil_h + 1; }
  size_t tap_row_bytes(int64_t out_w) const { return static_cast<size_t>(out_w * groups * 256); }
};

// Output rows [row0, row1) of channel block `block`; ring: q.ring_rows(dil_h) * tap_row_bytes(out_w)
// bytes of scratch (64-byte aligned), owned by the calling thread for the call.
void qdepthwise4_avx512(const QDepthwiseArgs& a, const QDepthwise4& q, int64_t block, int64_t row0, int64_t row1,
                        uint8_t* ring);

// The weights of qdepthwise_avx2, made once per conv: per block of 16 channels and per tap two
// vectors of 16 int16, `even` holding w[c] in lane c % 16 for the block's even channels (0 in the
// odd lanes) and `odd` the odd channels' (0 in the even lanes); channels past C are 0.
struct QDepthwiseAvx2 {
  int64_t channels = 0, blocks = 0, taps = 0;
  std::vector<int16_t> w;  // [block][tap][even, odd][16]

  // From [tap][stride] int32 weights (zero point removed); empty() when a weight does not fit int16.
  QDepthwiseAvx2(int64_t channels, int64_t taps, const int32_t* weights, int64_t stride);
  QDepthwiseAvx2() = default;
  bool empty() const { return w.empty(); }
};

// Output rows [row0, row1), as qdepthwise_scalar (a.weights unused: q holds them; q.taps ==
// k_h * k_w and q.channels == C). Allocates its own small scratch (a row's tap pointers).
void qdepthwise_avx2(const QDepthwiseArgs& a, const QDepthwiseAvx2& q, int64_t row0, int64_t row1);

}  // namespace fusor::int8
