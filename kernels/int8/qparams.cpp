#include <cstring>
#include <string>

#include "core/util/error.h"
#include "kernels/cpu_features.h"
#include "kernels/fused/activation.h"
#include "kernels/int8/qelementwise.h"
#include "kernels/int8/qops.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {
namespace {

QParam param(const Node& n, const char* scale, const char* zero, bool required) {
  QParam q;
  if (required && !n.attr(scale)) throw_bad_input(n.describe() + ": attribute '" + std::string(scale) + "' is required");
  q.scale = n.attr_float(scale, 1.0f);
  q.zero_point = static_cast<int32_t>(n.attr_int(zero, 0));
  if (!(q.scale > 0.0f) || !std::isfinite(q.scale))
    throw_bad_input(n.describe() + ": " + scale + " must be positive and finite, got " + std::to_string(q.scale));
  return q;
}

}  // namespace

void activation_clamp(const Node& n, float& lo, float& hi) {
  const ActivationSpec a = fused::activation_of(n);
  lo = -3.0e38f;
  hi = 3.0e38f;
  switch (a.kind) {
    case Activation::None: return;
    case Activation::Relu: lo = 0.0f; return;
    case Activation::Clip: lo = a.alpha; hi = a.beta; return;
    default: break;
  }
  throw_bad_input(n.describe() + ": activation '" + activation_name(a.kind) + "' is not a clamp (\"\", Relu or Clip)");
}

QConvSpec qconv_params(const Node& n) {
  QConvSpec s;
  s.x = param(n, "x_scale", "x_zero_point", true);
  s.y = param(n, "y_scale", "y_zero_point", true);
  s.residual = n.attr_float("conv_scale", 0.0f) != 0.0f;
  if (s.residual) {
    s.conv = param(n, "conv_scale", "conv_zero_point", true);
    s.z = param(n, "z_scale", "z_zero_point", false);
  }
  activation_clamp(n, s.act_lo, s.act_hi);
  return s;
}

QBinaryParams qbinary_params(const Node& n) {
  QBinaryParams p;
  p.a = param(n, "a_scale", "a_zero_point", true);
  p.b = param(n, "b_scale", "b_zero_point", true);
  p.y = param(n, "y_scale", "y_zero_point", true);
  activation_clamp(n, p.act_lo, p.act_hi);
  return p;
}

void qlookup(const uint8_t* x, bool x_signed, const uint8_t* table, uint8_t* y, int64_t n, ThreadPool* pool) {
  // The table copied (flipped for int8 X) to the stack, where no store to Y can alias it; with
  // AVX512_VBMI 64 lookups per step by byte permutes, with AVX2 32 by sixteen vpshufb (about twice
  // the byte loop's speed), else eight per 8-byte load and store.
  uint8_t t[256];
  for (int v = 0; v < 256; ++v) t[v] = table[v ^ (x_signed ? 0x80 : 0x00)];
  const bool vbmi = active_isa() == Isa::Avx512 && cpu_features().avx512_vbmi;
  const bool avx2 = !vbmi && active_isa() >= Isa::Avx2;
  auto body = [&](int64_t b, int64_t e) {
    if (vbmi) return qlookup_run_avx512vbmi(x + b, t, y + b, e - b);
    if (avx2) return qlookup_run_avx2(x + b, t, y + b, e - b);
    int64_t i = b;
    for (; i + 8 <= e; i += 8) {
      uint64_t in, out = 0;
      std::memcpy(&in, x + i, 8);
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) out |= static_cast<uint64_t>(t[(in >> (8 * k)) & 0xff]) << (8 * k);
      std::memcpy(y + i, &out, 8);
    }
    for (; i < e; ++i) y[i] = t[x[i]];
  };
  // A thread's share must outweigh waking it: ~64K elements at a byte a cycle, ~1M by permutes,
  // ~128K by vpshufb.
  const int64_t min_split = vbmi ? (1 << 20) : avx2 ? (1 << 17) : (1 << 16);
  if (pool && n >= min_split) {
    pool->parallel_for(n, body, min_split / 2);
  } else {
    body(0, n);
  }
}

}  // namespace fusor::int8
