#include "kernels/int8/qconv.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/util/error.h"
#include "kernels/common/slot_tasks.h"
#include "kernels/int8/qdepthwise.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {

namespace {

// Input channels from which the Winograd form replaces the GEMM (fewer: the transforms cost more
// than the products they save).
constexpr int64_t kWinogradMinC = 16;

// The Winograd output tile asked for: spec's, else FUSOR_INT8_WINOGRAD=2 or =4, else 0 (chosen).
int tile_asked(const QConvSpec& spec) {
  if (spec.winograd_tile) return spec.winograd_tile;
  const char* e = std::getenv("FUSOR_INT8_WINOGRAD");
  return e && (std::string_view(e) == "2" || std::string_view(e) == "4") ? e[0] - '0' : 0;
}

// The weights less their zero points, as int16 (n per output channel).
std::vector<int16_t> centred_filters(const void* w, bool w_signed, int64_t out_c, int64_t n, const int32_t* w_zero,
                                     int64_t w_zero_n) {
  std::vector<int16_t> g(static_cast<size_t>(out_c * n));
  for (int64_t oc = 0; oc < out_c; ++oc) {
    const int32_t z = w_zero ? w_zero[w_zero_n == 1 ? 0 : oc] : 0;
    for (int64_t i = oc * n; i < (oc + 1) * n; ++i)
      g[static_cast<size_t>(i)] = static_cast<int16_t>(
          (w_signed ? static_cast<int32_t>(static_cast<const int8_t*>(w)[i]) : static_cast<const uint8_t*>(w)[i]) - z);
  }
  return g;
}

// Rough int8 GEMM rate of one core, for ThreadPool::threads_for (VNNI: about 150 multiply-adds per ns).
constexpr double kMacsPerNs = 150.0;
// The same for the depthwise kernel with four taps per vpdpbusd.
constexpr double kDwMacsPerNs = 40.0;

int32_t quantize_bound(float v, const QParam& q, int32_t lo, int32_t hi) {
  if (v <= -1.0e38f) return lo;
  if (v >= 1.0e38f) return hi;
  const double r = std::nearbyint(static_cast<double>(v) / q.scale) + q.zero_point;
  return static_cast<int32_t>(std::clamp<double>(r, lo, hi));
}

// Copies and fills of a few dozen bytes, inline: an im2col row is made of such runs (a stem's
// kernel row on 3 channels is 21 bytes), and a libc call per run cost more than the copying.
inline void copy_bytes(uint8_t* d, const uint8_t* s, int64_t n) {
  // Overlapping words from both ends: no loop below 64 bytes (SSE2 is in the x86-64 baseline).
  auto move16 = [&](int64_t at) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + at), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + at)));
  };
  auto move8 = [&](int64_t at) {
    uint64_t w;
    std::memcpy(&w, s + at, 8);
    std::memcpy(d + at, &w, 8);
  };
  if (n >= 64) {
    std::memcpy(d, s, static_cast<size_t>(n));
  } else if (n > 32) {
    move16(0);
    move16(16);
    move16(n - 32);
    move16(n - 16);
  } else if (n >= 16) {
    move16(0);
    move16(n - 16);
  } else if (n >= 8) {
    move8(0);
    move8(n - 8);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i];
  }
}

inline void fill_bytes(uint8_t* d, uint8_t value, int64_t n) {
  if (n >= 64) {
    std::memset(d, value, static_cast<size_t>(n));
  } else if (n >= 8) {
    const uint64_t v = value * 0x0101010101010101ull;
    for (int64_t i = 0; i + 8 < n; i += 8) std::memcpy(d + i, &v, 8);
    std::memcpy(d + n - 8, &v, 8);
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] = value;
  }
}

// One kernel row of im2col: the k_w taps at input columns iw0, iw0 + dil_w, ... of one input row
// (src_row: its first pixel, at the group's first channel) into dst, k_w * Cg bytes; taps outside
// the row are the zero point. With one group and no dilation the inside taps are one contiguous
// run of pixels, copied at once (a 7x7 conv on 3 channels copies 21 bytes, not 7 times 3).
void copy_taps(const uint8_t* src_row, int64_t iw0, const Conv2dShape& s, int64_t Cg, int64_t C, uint8_t pad,
               uint8_t flip, uint8_t* dst) {
  auto copy = [&](uint8_t* d, const uint8_t* from, int64_t bytes) {
    if (flip) {
      for (int64_t c = 0; c < bytes; ++c) d[c] = from[c] ^ flip;
    } else {
      copy_bytes(d, from, bytes);
    }
  };
  if (Cg == C && s.dil_w == 1) {
    const int64_t lo = std::clamp<int64_t>(-iw0, 0, s.k_w), hi = std::clamp<int64_t>(s.in_w - iw0, lo, s.k_w);
    if (lo > 0) fill_bytes(dst, pad, lo * C);
    if (hi > lo) copy(dst + lo * C, src_row + (iw0 + lo) * C, (hi - lo) * C);
    if (hi < s.k_w) fill_bytes(dst + hi * C, pad, (s.k_w - hi) * C);
    return;
  }
  for (int64_t kw = 0; kw < s.k_w; ++kw, dst += Cg) {
    const int64_t iw = iw0 + kw * s.dil_w;
    if (iw < 0 || iw >= s.in_w) {
      fill_bytes(dst, pad, Cg);
    } else {
      copy(dst, src_row + iw * C, Cg);
    }
  }
}

// The bytes an im2col block may be written past its end by im2col_wide (its widest vector).
constexpr int64_t kIm2colSlack = 64;
// Kernel rows of at most this many taps take the wide path.
constexpr int64_t kWideMaxKh = 16;

// The moves of im2col_wide's inside pixels: cnt rows of kp bytes at d, each k_h moves of W bytes
// (kernel row kh of pixel j from rows[kh] + off + j * step, to d + j * kp + kh * run).
template <int W>
void wide_moves(const uint8_t* const* rows, int64_t k_h, int64_t run, int64_t off, int64_t step, uint8_t* d, int64_t kp,
                int64_t cnt) {
  for (int64_t j = 0; j < cnt; ++j, d += kp, off += step) {
    uint8_t* dd = d;
    for (int64_t kh = 0; kh < k_h; ++kh, dd += run) std::memcpy(dd, rows[kh] + off, W);
  }
}

// The same compiled for AVX2 (every int8 path above scalar has it): a 32-byte move is one YMM
// load and store instead of two XMM ones, and a stem's 21-byte kernel rows are stored 21 bytes
// apart, so that many stores cross a cache line: half the stores took the moves from 11% of
// resnet18's stem to 7% (perf on qconv_bench r18_conv1_7x7s2).
// (Intrinsics: GCC's generic tuning splits a 32-byte memcpy into two XMM moves even here.)
template <int W>
__attribute__((target("avx2"))) void wide_moves_avx2(const uint8_t* const* rows, int64_t k_h, int64_t run, int64_t off,
                                                     int64_t step, uint8_t* d, int64_t kp, int64_t cnt) {
  static_assert(W % 32 == 0);
  for (int64_t j = 0; j < cnt; ++j, d += kp, off += step) {
    uint8_t* dd = d;
    for (int64_t kh = 0; kh < k_h; ++kh, dd += run)
      for (int i = 0; i < W; i += 32)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dd + i),
                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[kh] + off + i)));
  }
}

// im2col_run for a short kernel row (run = k_w * C <= W bytes, one group, no dilation, no sign
// flip: a stem's 3 channels): pixel by pixel, each inside kernel row copied as one W-byte move
// (constant size: a few vector moves, where an exact copy of 9 or 21 bytes is several overlapping
// ones). The moves go up in address order, so the bytes one writes past its run are written again
// by the next: the last kernel row of a pixel spills into the row's padding [K, kp), which the
// kernels read but multiply by B's zero rows, and into the next pixel's row, written next; the
// block's last row spills up to W bytes past the block (kIm2colSlack). A run whose W-byte read
// would pass the end of X, and the pixels with padded taps, are copied exactly.
template <int W>
void im2col_wide(const uint8_t* x, const uint8_t* x_end, const Conv2dShape& s, int64_t n, int64_t oh, int64_t ow0,
                 int64_t cnt, int64_t lo, int64_t hi, uint8_t pad, uint8_t* dst, int64_t kp, bool avx2) {
  const int64_t C = s.in_c, run = s.k_w * C;
  const uint8_t* rows[kWideMaxKh];
  for (int64_t kh = 0; kh < s.k_h; ++kh) {
    const int64_t ih = oh * s.stride_h - s.pad_t + kh * s.dil_h;
    rows[kh] = ih < 0 || ih >= s.in_h ? nullptr : x + (n * s.in_h + ih) * s.in_w * C;
  }
  auto general = [&](int64_t j) {
    const int64_t ow = ow0 + j, iw0 = ow * s.stride_w - s.pad_l;
    const bool inside = ow >= lo && ow < hi;
    uint8_t* d = dst + j * kp;
    for (int64_t kh = 0; kh < s.k_h; ++kh, d += run) {
      if (!rows[kh]) {
        fill_bytes(d, pad, run);
      } else if (!inside) {
        copy_taps(rows[kh], iw0, s, C, C, pad, 0, d);
      } else if (rows[kh] + iw0 * C + W <= x_end) {
        std::memcpy(d, rows[kh] + iw0 * C, W);
      } else {
        copy_bytes(d, rows[kh] + iw0 * C, run);
      }
    }
  };
  // Pixels [j_lo, j_hi) have every tap inside and every read within X (the last kernel row's is
  // the furthest): the moves alone, in a loop with nothing to test or reload.
  const int64_t k_h = s.k_h, step = s.stride_w * C;
  bool all_rows = true;
  for (int64_t kh = 0; kh < k_h; ++kh) all_rows = all_rows && rows[kh];
  int64_t j_lo = 0, j_hi = 0;
  if (all_rows) {
    j_lo = std::clamp<int64_t>(lo - ow0, 0, cnt);
    j_hi = std::clamp<int64_t>(hi - ow0, j_lo, cnt);
    while (j_hi > j_lo && rows[k_h - 1] + ((ow0 + j_hi - 1) * s.stride_w - s.pad_l) * C + W > x_end) --j_hi;
  }
  for (int64_t j = 0; j < j_lo; ++j) general(j);
  if (j_hi > j_lo) {
    const int64_t off0 = ((ow0 + j_lo) * s.stride_w - s.pad_l) * C;
    bool moved = false;
    if constexpr (W >= 32) {
      if (avx2) {
        wide_moves_avx2<W>(rows, k_h, run, off0, step, dst + j_lo * kp, kp, j_hi - j_lo);
        moved = true;
      }
    }
    if (!moved) wide_moves<W>(rows, k_h, run, off0, step, dst + j_lo * kp, kp, j_hi - j_lo);
  }
  for (int64_t j = j_hi; j < cnt; ++j) general(j);
}

// im2col rows of pixels ow0 .. ow0 + cnt - 1 of output row (n, oh), channels [c0, c0 + Cg), into
// rows of kp bytes at dst (kh, kw, c order). Kernel row by kernel row, so that a pixel whose taps
// are all inside is one copy of k_w * C bytes (one group, no dilation, no sign flip). x_end: the
// end of X.
void im2col_run(const uint8_t* x, const uint8_t* x_end, const Conv2dShape& s, int64_t n, int64_t oh, int64_t ow0,
                int64_t cnt, int64_t c0, int64_t Cg, uint8_t pad, uint8_t flip, uint8_t* dst, int64_t kp, bool avx2) {
  const int64_t C = s.in_c, run = s.k_w * Cg;
  const bool contiguous = Cg == C && s.dil_w == 1 && !flip;
  // Pixels [lo, hi) of the output row have every tap inside horizontally.
  const int64_t reach = (s.k_w - 1) * s.dil_w;
  const int64_t lo = (s.pad_l + s.stride_w - 1) / s.stride_w;
  const int64_t hi = s.in_w - 1 + s.pad_l - reach >= 0 ? (s.in_w - 1 + s.pad_l - reach) / s.stride_w + 1 : 0;
  if (contiguous && s.k_h <= kWideMaxKh && run <= 64) {
    if (run <= 16) return im2col_wide<16>(x, x_end, s, n, oh, ow0, cnt, lo, hi, pad, dst, kp, avx2);
    if (run <= 32) return im2col_wide<32>(x, x_end, s, n, oh, ow0, cnt, lo, hi, pad, dst, kp, avx2);
    return im2col_wide<64>(x, x_end, s, n, oh, ow0, cnt, lo, hi, pad, dst, kp, avx2);
  }
  for (int64_t kh = 0; kh < s.k_h; ++kh, dst += run) {
    const int64_t ih = oh * s.stride_h - s.pad_t + kh * s.dil_h;
    if (ih < 0 || ih >= s.in_h) {
      for (int64_t j = 0; j < cnt; ++j) fill_bytes(dst + j * kp, pad, run);
      continue;
    }
    const uint8_t* src_row = x + (n * s.in_h + ih) * s.in_w * C + c0;
    for (int64_t j = 0; j < cnt; ++j) {
      const int64_t ow = ow0 + j, iw0 = ow * s.stride_w - s.pad_l;
      if (contiguous && ow >= lo && ow < hi) {
        copy_bytes(dst + j * kp, src_row + iw0 * C, run);
      } else {
        copy_taps(src_row, iw0, s, Cg, C, pad, flip, dst + j * kp);
      }
    }
  }
}

}  // namespace

QConvWeights::QConvWeights(const QConvSpec& spec, const void* w, bool w_signed, const float* w_scale,
                           int64_t w_scale_n, const int32_t* w_zero, int64_t w_zero_n, const int32_t* bias,
                           const float* bias_scale, int64_t bias_scale_n, Int8Isa isa)
    : spec_(spec), isa_(isa) {
  const int64_t OC = spec.out_c, Cg = spec.in_c_per_group, taps = spec.k_h * spec.k_w, G = spec.group;
  const int64_t OCg = OC / G, K = Cg * taps;
  depthwise_ = G > 1 && Cg == 1 && OCg == 1;
  const int32_t tmin = spec.signed_act ? -128 : 0, tmax = spec.signed_act ? 127 : 255;
  x_zero_u8_ = spec.x.zero_point + (spec.signed_act ? 128 : 0);
  auto wv = [&](int64_t oc, int64_t c, int64_t t) -> int32_t {
    const int64_t i = (oc * Cg + c) * taps + t;
    return w_signed ? static_cast<const int8_t*>(w)[i] : static_cast<const uint8_t*>(w)[i];
  };
  auto wz = [&](int64_t oc) -> int32_t { return w_zero ? w_zero[w_zero_n == 1 ? 0 : oc] : 0; };
  auto ws = [&](int64_t oc) { return w_scale[w_scale_n == 1 ? 0 : oc]; };

  col_offset_.assign(static_cast<size_t>(OC), 0);
  col_bzero_.assign(static_cast<size_t>(OC), 0);
  mult_.assign(static_cast<size_t>(OC), 0.0f);
  add_.assign(static_cast<size_t>(OC), 0.0f);
  // The conv's own output quantization: y, or the intermediate one with a residual.
  const QParam& out = spec.residual ? spec.conv : spec.y;
  for (int64_t oc = 0; oc < OC; ++oc) {
    const float real_scale = spec.x.scale * ws(oc);  // of the integer accumulator
    mult_[oc] = real_scale / out.scale;
    add_[oc] = static_cast<float>(out.zero_point);
    if (bias) {
      const float bs = bias_scale[bias_scale_n == 1 ? 0 : oc];
      if (bs == real_scale) {
        col_offset_[oc] += bias[oc];  // the quantize_static form: exact in the integer domain
      } else {
        add_[oc] += static_cast<float>(bias[oc]) * bs / out.scale;
      }
    }
  }

  if (depthwise_) {
    // [tap][channel] int32 weights with their zero points subtracted:
    // sum_t (x - xz)(w - wz) = sum_t x (w - wz) - xz sum_t (w - wz).
    dw_stride_ = (OC + 15) / 16 * 16;
    dw_weights_.assign(static_cast<size_t>(taps * dw_stride_), 0);
    for (int64_t oc = 0; oc < OC; ++oc) {
      int32_t sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        const int32_t v = wv(oc, 0, t) - wz(oc);
        dw_weights_[static_cast<size_t>(t * dw_stride_ + oc)] = v;
        sum += v;
      }
      col_offset_[oc] -= spec.x.zero_point * sum;
    }
  } else if (spec.unit_stride && isa == Int8Isa::Avx2 && G == 1 && spec.k_h == 3 && spec.k_w == 3 &&
             Cg >= kWinogradMinC && switch_on("FUSOR_INT8_WINOGRAD") &&
             !(wino_ = QWinograd(OC, Cg, centred_filters(w, w_signed, OC, Cg * 9, w_zero, w_zero_n).data(),
                                 tile_asked(spec)))
                  .empty()) {
    bias_offset_ = col_offset_;  // the Winograd sums are exact: only the bias to add
  } else {
    // B[k][n] for k = (kh * kw_size + kw) * Cg + c, n = output channel in the group.
    std::vector<uint8_t> b(static_cast<size_t>(K * OCg));
    for (int64_t g = 0; g < G; ++g) {
      for (int64_t n = 0; n < OCg; ++n)
        for (int64_t c = 0; c < Cg; ++c)
          for (int64_t t = 0; t < taps; ++t) b[static_cast<size_t>((t * Cg + c) * OCg + n)] = static_cast<uint8_t>(wv(g * OCg + n, c, t));
      packed_.emplace_back(b.data(), w_signed, K, OCg, OCg, false, isa);
      const QPackedB& pb = packed_.back();
      for (int64_t n = 0; n < OCg; ++n) {
        const int64_t oc = g * OCg + n;
        const int32_t bz = wz(oc) - pb.shift();  // the stored weights' zero point
        col_bzero_[oc] = bz;
        need_row_sums_ = need_row_sums_ || bz != 0;
        col_offset_[oc] += -x_zero_u8_ * pb.col_sums()[n] + static_cast<int32_t>(K) * x_zero_u8_ * bz;
      }
    }
  }

  QEpilogue& e = epilogue_;
  e.out = spec.signed_act ? QEpilogue::Out::S8 : QEpilogue::Out::U8;
  e.col_offset = col_offset_.data();
  e.mult = mult_.data();
  e.add = add_.data();
  e.qmin = quantize_bound(spec.act_lo, spec.y, tmin, tmax);
  e.qmax = quantize_bound(spec.act_hi, spec.y, tmin, tmax);
  if (e.qmin > e.qmax) e.qmin = e.qmax;
  e.cmin = tmin;
  e.cmax = tmax;
  // (Not for dynamic weights: QDepthwise4 keeps the epilogue's constants, which depend on X's
  // parameters there.)
  if (depthwise_ && isa == Int8Isa::Avx512Vnni && !spec.dynamic)
    dw4_ = QDepthwise4(OC, spec.k_h, spec.k_w, dw_weights_.data(), dw_stride_, epilogue_, spec.signed_act);
  if (depthwise_ && (isa == Int8Isa::Avx2 || isa == Int8Isa::AvxVnni))
    dw_avx2_ = QDepthwiseAvx2(OC, spec.k_h * spec.k_w, dw_weights_.data(), dw_stride_);
  if (spec.residual) {
    // y = round((t - cz) * cs / ys + (z - zz) * zs / ys) + yz, t the conv's quantized output.
    e.res_t = spec.conv.scale / spec.y.scale;
    e.res_z = spec.z.scale / spec.y.scale;
    e.res_c = static_cast<float>(spec.y.zero_point) - static_cast<float>(spec.conv.zero_point) * e.res_t -
              static_cast<float>(spec.z.zero_point) * e.res_z;
  }
}

void QConvWeights::run(const Conv2dShape& s, const uint8_t* x, const uint8_t* z, uint8_t* y, ThreadPool* pool,
                       const std::function<void*(size_t)>& scratch) const {
  if (s.batch * s.out_h * s.out_w <= 0 || s.out_c <= 0) return;  // nothing to write (an empty batch)
  if (spec_.dynamic) throw_internal("QConvWeights::run: dynamic weights run by run_float");
  QEpilogue ep = epilogue_;
  if (z) {
    ep.residual = z;
    ep.residual_ld = s.out_c;  // a pixel is a row of the epilogue
  }
  if (depthwise_) {
    run_depthwise(s, x, ep, spec_.x.zero_point, y, pool, scratch);
  } else if (!wino_.empty()) {
    ep.col_offset = bias_offset_.data();
    wino_.run(s, x, spec_.signed_act ? 0x80 : 0x00, x_zero_u8_, ep, y, pool, scratch);
  } else {
    run_gemm(s, x, ep, x_zero_u8_, y, pool, scratch);
  }
}

void QConvWeights::run_float(const Conv2dShape& s, const uint8_t* x, int32_t x_zero, float x_scale, const float* bias,
                             const ActivationSpec& act, float* y, ThreadPool* pool,
                             const std::function<void*(size_t)>& scratch) const {
  if (!spec_.dynamic || spec_.signed_act) throw_internal("QConvWeights::run_float: needs dynamic uint8 weights");
  if (s.batch * s.out_h * s.out_w <= 0 || s.out_c <= 0) return;
  // This call's per-channel constants (qgemm.h has the algebra): the weights were prepared with X's
  // zero point 0 and scale 1, so mult_ holds w_scale and col_offset_ nothing.
  const int64_t OC = spec_.out_c, OCg = OC / spec_.group, taps = spec_.k_h * spec_.k_w;
  // (Vectors, not scratch: run_gemm asks scratch for its block once, and a caller's scratch need
  // not keep an earlier block alive.)
  std::vector<int32_t> off(static_cast<size_t>(OC));
  std::vector<float> mult(static_cast<size_t>(OC)), add(static_cast<size_t>(OC));
  for (int64_t oc = 0; oc < OC; ++oc) {
    if (!wino_.empty()) {
      off[oc] = 0;  // the Winograd sums are exact already
    } else if (depthwise_) {
      // sum_t (x - xz)(w - wz) = sum_t x (w - wz) - xz sum_t (w - wz) (the weights stored less wz)
      int32_t sum = 0;
      for (int64_t t = 0; t < taps; ++t) sum += dw_weights_[static_cast<size_t>(t * dw_stride_ + oc)];
      off[oc] = -x_zero * sum;
    } else {
      const QPackedB& pb = packed_[static_cast<size_t>(oc / OCg)];
      off[oc] = -x_zero * pb.col_sums()[oc % OCg] + static_cast<int32_t>(pb.k()) * x_zero * col_bzero_[oc];
    }
    mult[oc] = x_scale * mult_[oc];
    add[oc] = bias ? bias[oc] : 0.0f;
  }
  QEpilogue ep;
  ep.out = QEpilogue::Out::F32;
  ep.col_offset = off.data();
  ep.mult = mult.data();
  ep.add = add.data();
  ep.act = act;
  if (depthwise_) {
    run_depthwise(s, x, ep, x_zero, y, pool, scratch);
  } else if (!wino_.empty()) {
    wino_.run(s, x, 0x00, x_zero, ep, y, pool, scratch);
  } else {
    run_gemm(s, x, ep, x_zero, y, pool, scratch);
  }
}

void QConvWeights::run_depthwise(const Conv2dShape& s, const uint8_t* x, const QEpilogue& ep, int32_t x_zero,
                                 void* y, ThreadPool* pool, const std::function<void*(size_t)>& scratch) const {
  QDepthwiseArgs a;
  a.s = &s;
  a.x = x;
  a.z = ep.residual;
  a.y = static_cast<uint8_t*>(y);
  a.weights = dw_weights_.data();
  a.w_stride = dw_stride_;
  a.x_zero = x_zero;
  a.signed_act = spec_.signed_act;
  a.ep = ep;
  const int64_t rows = s.batch * s.out_h;
  if (!dw4_.empty() && dw4_.ring_rows(s.dil_h) <= 64) {
    // One band of rows per thread, all channel blocks: the rows a thread wrote in the layer before
    // are the rows it reads (a split by channel blocks was slower at 2 threads than at 1 on 7x7
    // maps); a band builds the first k_h - 1 tap rows that the band above built too.
    const int64_t blocks = dw4_.blocks;
    const double macs = static_cast<double>(rows) * s.out_w * s.out_c * s.k_h * s.k_w;
    const int threads = pool ? pool->threads_for(macs / kDwMacsPerNs) : 1;
    int64_t bands = std::min<int64_t>(threads, rows);
    const int64_t per_band = (rows + bands - 1) / bands;
    bands = (rows + per_band - 1) / per_band;
    const int64_t tasks = bands;
    const int nt = static_cast<int>(std::min<int64_t>(threads, tasks));
    const size_t slot = (static_cast<size_t>(dw4_.ring_rows(s.dil_h)) * dw4_.tap_row_bytes(s.out_w) + 63) / 64 * 64;
    const uintptr_t raw = reinterpret_cast<uintptr_t>(scratch(slot * static_cast<size_t>(nt) + 64));
    uint8_t* buf = reinterpret_cast<uint8_t*>((raw + 63) / 64 * 64);
    SlotTasks slot_tasks(tasks, nt);
    auto work = [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        uint8_t* ring = buf + static_cast<size_t>(t) * slot;
        slot_tasks.run(static_cast<int>(t), [&](int64_t task) {
          const int64_t r0 = task * per_band;
          for (int64_t b = 0; b < blocks; ++b) qdepthwise4_avx512(a, dw4_, b, r0, std::min(rows, r0 + per_band), ring);
        });
      }
    };
    if (nt > 1) {
      pool->parallel_for_slots(nt, work);
    } else {
      work(0, 1);
    }
    return;
  }
  auto fn = isa_ == Int8Isa::Avx512Vnni ? qdepthwise_avx512 : qdepthwise_scalar;
  auto body = [&](int64_t r0, int64_t r1) {
    if (!dw_avx2_.empty()) {
      qdepthwise_avx2(a, dw_avx2_, r0, r1);
    } else {
      fn(a, r0, r1);
    }
  };
  const int64_t grain = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, s.out_w * s.out_c * s.k_h * s.k_w));
  if (pool && rows > 1) {
    pool->parallel_for(rows, body, grain);
  } else {
    body(0, rows);
  }
}

bool QConvWeights::run_implicit(const Conv2dShape& s, const uint8_t* x, const QEpilogue& ep, int32_t x_zero_u8,
                                void* y, ThreadPool* pool, const std::function<void*(size_t)>& scratch) const {
  const int64_t C = s.in_c, OC = s.out_c, M = s.batch * s.out_h * s.out_w;
  if (s.group != 1 || s.dil_w != 1 || C % 4 != 0 || need_row_sums_ || !qgemm_segmented_supported(isa_)) return false;
  const bool padded = s.pad_t || s.pad_l || s.pad_b || s.pad_r || spec_.signed_act;
  const int64_t Hp = s.in_h + s.pad_t + s.pad_b, Wp = s.in_w + s.pad_l + s.pad_r;
  // Every tap inside the padded input (a shape whose output is larger than its pads allow goes
  // the im2col way, which reads only what is there).
  if ((s.out_h - 1) * s.stride_h + (s.k_h - 1) * s.dil_h >= Hp || (s.out_w - 1) * s.stride_w + s.k_w - 1 >= Wp)
    return false;
  const QPackedB& pb = packed_[0];
  // Tasks: blocks of about 120 rows, a multiple of the 4-vector tile's 5 rows where possible, and
  // with few blocks ranges of panels as well (as run_gemm).
  // With AMX, blocks of about 128 rows, a multiple of its 32-row passes (rows past the last whole
  // 16 run on the VNNI tiles alone, several times slower).
  const bool amx = active_int8_amx();
  const int64_t blocks0 = amx ? (M + 127) / 128 : (M + 119) / 120;
  const int64_t rb = amx ? ((M + blocks0 - 1) / blocks0 + 31) / 32 * 32 : ((M + blocks0 - 1) / blocks0 + 4) / 5 * 5;
  const int64_t blocks = (M + rb - 1) / rb, panels = pb.panels();
  const int threads = pool ? pool->threads_for(static_cast<double>(M) * pb.k() * OC / kMacsPerNs) : 1;
  const int64_t want_tasks = threads > 1 ? 4 * threads : 1;
  const int64_t chunks = blocks < want_tasks ? std::min(panels, (want_tasks + blocks - 1) / blocks) : 1;
  const int64_t per_chunk = (panels + chunks - 1) / chunks, tasks = blocks * chunks;
  const int nt = static_cast<int>(std::min<int64_t>(threads, tasks));
  const size_t xp_bytes = padded ? (static_cast<size_t>(s.batch * Hp * Wp * C) + 63) / 64 * 64 : 0;
  const size_t ptr_bytes = static_cast<size_t>(rb) * sizeof(const uint8_t*);
  uint8_t* buf = static_cast<uint8_t*>(scratch(xp_bytes + ptr_bytes * static_cast<size_t>(nt) + 64));
  buf = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(buf) + 63) / 64 * 64);
  const uint8_t* src = x;
  if (padded) {
    // The input with its pads (X's zero point) and int8 flipped to uint8, row by row.
    const uint8_t pad = static_cast<uint8_t>(x_zero_u8), flip = spec_.signed_act ? 0x80 : 0x00;
    const int64_t row_bytes = Wp * C, in_row = s.in_w * C;
    auto rows_fn = [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        uint8_t* d = buf + r * row_bytes;
        const int64_t ih = r % Hp - s.pad_t;
        if (ih < 0 || ih >= s.in_h) {
          std::memset(d, pad, static_cast<size_t>(row_bytes));
          continue;
        }
        const uint8_t* from = x + ((r / Hp) * s.in_h + ih) * in_row;
        std::memset(d, pad, static_cast<size_t>(s.pad_l * C));
        uint8_t* mid = d + s.pad_l * C;
        if (flip) {
          for (int64_t i = 0; i < in_row; ++i) mid[i] = from[i] ^ flip;
        } else {
          std::memcpy(mid, from, static_cast<size_t>(in_row));
        }
        std::memset(mid + in_row, pad, static_cast<size_t>(s.pad_r * C));
      }
    };
    // Split by slot like the GEMM's rows below, so a slot's core copies about the rows it reads
    // (and wrote in the layer before).
    if (nt > 1) {
      const int64_t prow = s.batch * Hp;
      pool->parallel_for_slots(nt, [&](int64_t t0, int64_t t1) { rows_fn(t0 * prow / nt, t1 * prow / nt); });
    } else {
      rows_fn(0, s.batch * Hp);
    }
    src = buf;
  }
  const uint8_t** ptrs = reinterpret_cast<const uint8_t**>(buf + xp_bytes);
  const int64_t seg_stride = s.dil_h * Wp * C;
  SlotTasks slot_tasks(tasks, nt);
  auto work = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const uint8_t** rows = ptrs + t * rb;
      slot_tasks.run(static_cast<int>(t), [&](int64_t task) {
        const int64_t blk = task / chunks, p0 = (task % chunks) * per_chunk;
        const int64_t m0 = blk * rb, m = std::min(rb, M - m0);
        // Row i: output pixel (n, oh, ow), its first tap at padded (oh * stride_h, ow * stride_w).
        for (int64_t i = 0; i < m;) {
          const int64_t row = m0 + i, ow0 = row % s.out_w, oh = (row / s.out_w) % s.out_h, n = row / (s.out_w * s.out_h);
          const int64_t cnt = std::min(m - i, s.out_w - ow0);
          const uint8_t* p = src + ((n * Hp + oh * s.stride_h) * Wp + ow0 * s.stride_w) * C;
          for (int64_t j = 0; j < cnt; ++j) rows[i + j] = p + j * s.stride_w * C;
          i += cnt;
        }
        qgemm_rows_segmented(pb, rows, s.k_h, seg_stride, m, static_cast<char*>(y) + m0 * OC * ep.out_bytes(), OC,
                             ep.offset(m0, 0), p0, p0 + per_chunk);
      });
    }
  };
  if (nt > 1) {
    pool->parallel_for_slots(nt, work);
  } else {
    work(0, 1);
  }
  return true;
}

void QConvWeights::run_gemm(const Conv2dShape& s, const uint8_t* x, const QEpilogue& ep, int32_t x_zero_u8, void* y,
                            ThreadPool* pool, const std::function<void*(size_t)>& scratch) const {
  const int64_t G = s.group, Cg = s.in_c / G, OCg = s.out_c / G, OC = s.out_c, C = s.in_c;
  const int64_t M = s.batch * s.out_h * s.out_w;
  const int64_t esize = ep.out_bytes();
  const bool direct = G == 1 && s.k_h == 1 && s.k_w == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_t == 0 &&
                      s.pad_l == 0 && s.pad_b == 0 && s.pad_r == 0 && C % 4 == 0 && !spec_.signed_act &&
                      !need_row_sums_;
  if (direct) {
    qgemm(packed_[0], x, C, M, y, OC, ep, pool);
    return;
  }
  if (run_implicit(s, x, ep, x_zero_u8, y, pool, scratch)) return;
  const int64_t kp = packed_[0].kp(), K = packed_[0].k();
  const uint8_t flip = spec_.signed_act ? 0x80 : 0x00;
  const uint8_t pad = static_cast<uint8_t>(x_zero_u8);
  // Rows per block: the im2col block about 64 KB (a multiple of most kernels' row tiles), the
  // blocks then evened out. A task is one row block and a range of B's panels: with few row blocks
  // (a small output map, deep in a CNN) the panels are split too so that every thread has work
  // (each such task builds its rows' im2col itself: cheap next to K * panel columns of GEMM).
  const int64_t rb_max = std::clamp<int64_t>((65536 / std::max<int64_t>(kp, 1)) / 48 * 48, 48, 480);
  const int64_t blocks = (M + rb_max - 1) / rb_max, rb = (M + blocks - 1) / blocks;
  const int64_t panels = packed_[0].panels();
  const int threads = pool ? pool->threads_for(static_cast<double>(M) * K * OC / kMacsPerNs) : 1;
  const int64_t want_tasks = threads > 1 ? 4 * threads : 1;
  const int64_t chunks = G == 1 && blocks < want_tasks ? std::min(panels, (want_tasks + blocks - 1) / blocks) : 1;
  const int64_t per_chunk = (panels + chunks - 1) / chunks, tasks = blocks * chunks;
  const int nt = static_cast<int>(std::min<int64_t>(threads, tasks));
  const size_t col_bytes = (static_cast<size_t>(rb * kp + kIm2colSlack) + 63) / 64 * 64;
  const uint8_t* x_end = x + s.batch * s.in_h * s.in_w * C;
  const size_t slot = col_bytes + (need_row_sums_ ? (static_cast<size_t>(rb) * 4 + 63) / 64 * 64 : 0);
  uint8_t* buf = static_cast<uint8_t*>(scratch(slot * static_cast<size_t>(nt)));
  SlotTasks slot_tasks(tasks, nt);
  auto work = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      uint8_t* col = buf + static_cast<size_t>(t) * slot;
      int32_t* rsum = reinterpret_cast<int32_t*>(col + col_bytes);
      slot_tasks.run(static_cast<int>(t), [&](int64_t task) {
        const int64_t blk = task / chunks, p0 = (task % chunks) * per_chunk;
        const int64_t m0 = blk * rb, m = std::min(rb, M - m0);
        for (int64_t g = 0; g < G; ++g) {
          // im2col rows m0 .. m0 + m - 1 of group g, one output row's run of pixels at a time.
          for (int64_t i = 0; i < m;) {
            const int64_t row = m0 + i, ow0 = row % s.out_w;
            const int64_t cnt = std::min(m - i, s.out_w - ow0);
            im2col_run(x, x_end, s, row / (s.out_w * s.out_h), (row / s.out_w) % s.out_h, ow0, cnt, g * Cg, Cg, pad,
                       flip, col + i * kp, kp, isa_ != Int8Isa::Scalar);
            for (int64_t j = 0; j < cnt; ++j) fill_bytes(col + (i + j) * kp + K, 0, kp - K);
            i += cnt;
          }
          QEpilogue e = ep.offset(m0, g * OCg);
          if (need_row_sums_) {
            qgemm_row_sums(col, kp, m, K, rsum);
            e.row_sums = rsum;
            e.col_bzero = col_bzero_.data() + g * OCg;
          }
          qgemm_rows(packed_[g], col, kp, m, static_cast<char*>(y) + (m0 * OC + g * OCg) * esize, OC, e, p0,
                     p0 + per_chunk);
        }
      });
    }
  };
  if (nt > 1) {
    pool->parallel_for_slots(nt, work);
  } else {
    work(0, 1);
  }
}

}  // namespace fusor::int8
