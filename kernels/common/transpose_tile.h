// A 4 x 4 transpose of 4-byte elements through SSE2 registers, for the copy loops that turn rows
// into columns (kernels/common/strided_copy.cpp's transposes, kernels/nchwc/reorder.cpp's
// reorders): dst[j * dst_stride + i] = src[i * src_stride + j] for i, j < 4 (strides in
// elements). A move of bits (never arithmetic), so any 4-byte type. Available when the baseline
// has SSE2 (every x86-64 build): kHaveTranspose4x4 says so; callers keep a plain loop otherwise.
#pragma once
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fusor {

#if defined(__SSE2__)
inline constexpr bool kHaveTranspose4x4 = true;

inline void transpose_4x4(const void* src, int64_t src_stride, void* dst, int64_t dst_stride) {
  const float* s = static_cast<const float*>(src);
  float* d = static_cast<float*>(dst);
  __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + src_stride), r2 = _mm_loadu_ps(s + 2 * src_stride),
         r3 = _mm_loadu_ps(s + 3 * src_stride);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(d, r0);
  _mm_storeu_ps(d + dst_stride, r1);
  _mm_storeu_ps(d + 2 * dst_stride, r2);
  _mm_storeu_ps(d + 3 * dst_stride, r3);
}
#else
inline constexpr bool kHaveTranspose4x4 = false;

inline void transpose_4x4(const void*, int64_t, void*, int64_t) {}
#endif

}  // namespace fusor
