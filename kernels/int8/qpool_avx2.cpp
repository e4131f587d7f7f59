// The AVX2 loop of an 8-bit NHWC MaxPool row (kernels/int8/qpool.h): 32 channels per step by
// unsigned byte max of sign-flipped bytes. A channel count that is not a multiple of 32 ends with
// one step over the last 32 channels (16 below 32 channels), overlapping the previous one: the max
// of a channel does not depend on the step that computes it, so the overlap rewrites equal bytes.
// Fewer than 16 channels are left to a byte loop.
#include <immintrin.h>

#include <algorithm>

#include "kernels/int8/qpool.h"

namespace fusor::int8 {
namespace {

// Calls f(c) for each step start c over C channels in steps of `w` (C >= w), the last one at C - w.
template <class F>
inline void steps(int64_t C, int64_t w, F&& f) {
  for (int64_t c = 0; c < C; c += w) f(std::min(c, C - w));
}

}  // namespace

void maxpool_row_nhwc_avx2(const Pool2d& g, const uint8_t* x, uint8_t* y, int64_t n, int64_t oh, bool sgn) {
  const uint8_t flip = sgn ? 0x80 : 0x00;
  const __m256i flip32 = _mm256_set1_epi8(static_cast<char>(flip));
  const __m128i flip16 = _mm_set1_epi8(static_cast<char>(flip));
  for (int64_t ow = 0; ow < g.OW; ++ow) {
    uint8_t* out = y + ((n * g.OH + oh) * g.OW + ow) * g.C;
    auto each_tap = [&](auto&& tap) { for_each_nhwc_tap(g, x, n, oh, ow, tap); };
    if (g.C >= 32) {
      steps(g.C, 32, [&](int64_t c) {
        __m256i best = _mm256_setzero_si256();
        each_tap([&](const uint8_t* in) {
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + c));
          best = _mm256_max_epu8(best, _mm256_xor_si256(v, flip32));
        });
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c), _mm256_xor_si256(best, flip32));
      });
    } else if (g.C >= 16) {
      steps(g.C, 16, [&](int64_t c) {
        __m128i best = _mm_setzero_si128();
        each_tap([&](const uint8_t* in) {
          const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + c));
          best = _mm_max_epu8(best, _mm_xor_si128(v, flip16));
        });
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + c), _mm_xor_si128(best, flip16));
      });
    } else {
      std::fill(out, out + g.C, uint8_t{0});
      each_tap([&](const uint8_t* in) {
        for (int64_t c = 0; c < g.C; ++c) out[c] = std::max<uint8_t>(out[c], in[c] ^ flip);
      });
      for (int64_t c = 0; c < g.C; ++c) out[c] ^= flip;
    }
  }
}

}  // namespace fusor::int8
