// IEEE half (float16) and bfloat16 <-> float conversion, round-to-nearest-even, NaN/Inf kept.
#pragma once
#include <cstdint>
#include <cstring>

namespace fusor {

inline float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do { ++e; man <<= 1; } while (!(man & 0x400));
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return sign | (absx > 0x7f800000u ? 0x7e00 : 0x7c00);  // NaN / Inf
  if (absx >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65536: overflow to Inf
  if (absx < 0x38800000u) {                        // below the smallest normal half: subnormal
    if (absx < 0x33000000u) return sign;           // rounds to zero
    uint32_t e = absx >> 23;
    uint32_t man = (absx & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - e;  // value / 2^-24 == man >> (126 - e)
    uint32_t v = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (v & 1))) ++v;
    return sign | static_cast<uint16_t>(v);
  }
  uint32_t v = absx - 0x38000000u;  // rebias exponent (127 -> 15)
  uint32_t rem = v & 0x1fff;
  v >>= 13;
  if (rem > 0x1000 || (rem == 0x1000 && (v & 1))) ++v;
  return sign | static_cast<uint16_t>(v);
}

inline float bfloat16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

}  // namespace fusor
