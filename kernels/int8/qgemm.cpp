// Packing, the scalar epilogue and panel kernel, and the threaded driver of the int8 GEMM core.
#include "kernels/int8/qgemm.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include <emmintrin.h>  // SSE2: baseline on x86-64

#include "core/util/error.h"
#include "kernels/common/slot_tasks.h"
#include "kernels/gemm/gemm.h"
#include "kernels/int8/qgemm_kernels.h"
#include "kernels/thread_pool.h"

namespace fusor::int8 {

int qpanel_cols(Int8Isa isa) { return isa == Int8Isa::Avx512Vnni ? 64 : 16; }

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

QPanelFn panel_fn(const QPackedB& b) {
  if (b.narrow()) return qpanel_avx2_bytes;
  switch (b.isa()) {
    case Int8Isa::Avx512Vnni: return qpanel_avx512vnni;
    case Int8Isa::AvxVnni: return qpanel_avxvnni;
    case Int8Isa::Avx2: return nullptr;  // reads A widened: qwiden_rows_avx2 + qpanel_avx2_w16
    case Int8Isa::Scalar: break;
  }
  return qpanel_scalar;
}

// The AVX2 kernels read A widened to uint16 (kernels/int8/qgemm_avx2.cpp): rows of kp values
// padded to 16, in runs of up to 128 KiB (a multiple of the 6-row tile), in a per-thread buffer.
int64_t avx2_widened_ld(int64_t kp) { return round_up(kp, 16); }
int64_t avx2_widened_rows(int64_t kp) {
  return std::max<int64_t>(6, (128 * 1024 / (2 * avx2_widened_ld(kp))) / 6 * 6);
}

// Where avx2_rows writes a block of rows prepared for the AVX2 panels: the copy of the rows (split
// or centred bytes, or uint16 widened), their listed bytes and the centred rows' constants. Grown,
// never shrunk: after the first call of a shape no allocation.
struct Avx2RowsStore {
  std::vector<uint8_t> lo;
  std::vector<int32_t> starts, row_const;
  std::vector<uint16_t> hot, widened;
};
template <class T>
T* grown(std::vector<T>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
  return v.data();
}

// Panels a task's rows must feed for the split and centred forms to pay for their preparation
// (avx2_rows). FUSOR_INT8_SPLIT_MIN_PANELS overrides it (tuning).
int64_t split_min_panels() {
  static const int64_t v = [] {
    const char* e = std::getenv("FUSOR_INT8_SPLIT_MIN_PANELS");
    return e ? static_cast<int64_t>(std::atoll(e)) : int64_t{3};
  }();
  return v;
}

// FUSOR_INT8_GROUPED=0: never the grouped form.
bool grouped_allowed() {
  static const bool allowed = switch_on("FUSOR_INT8_GROUPED");
  return allowed;
}

bool split_allowed() {
  static const bool allowed = switch_on("FUSOR_INT8_SPLIT");
  return allowed;
}

// Rows [0, m) of A prepared for the AVX2 panels of a wide B, by what their pairs of k hold
// (vpmaddubsw saturates per pair: kernels/int8/qgemm_bytes_avx2.cpp):
// - no pair summing past 255: the byte kernel reads them in place (255 * 128 = 32640: no weights
//   can saturate it; nothing to prepare), in its grouped form where each int16 lane's bytes of
//   every four k groups also sum to at most 255 (qrows_groups_fit_avx2: small bytes);
// - at most 1 in 64 bytes to list in the pairs that do: the split form (the same file: those
//   bytes' top bits cleared, a list of them);
// - at most 1 in 64 bytes to list with |d| > 64 (d = a - 128) in pairs of one sign whose |d| sum
//   past 128: the centred form (the same file: d against the weights flipped to unsigned);
// - else widened to uint16.
// A listed byte costs about eight vector operations per 16 columns, a byte saves under one against
// the widened kernel. The split and centred forms write a copy of the rows and their lists (each
// gives up past 1 in 64), which pays only where at least split_min_panels() panels read it
// (qconv_bench against widening: with 2 panels, 144 -> 24, split 1.25 and centred 1.39; with 3 or
// more 0.85-0.96); with fewer, a read-only check for the in-place form. FUSOR_INT8_SPLIT=0 always
// widens (comparisons). The copies go to the caller's Avx2RowsStore.
struct Avx2Rows {
  enum class Form : uint8_t { Widened, InPlace, Grouped, Split, Centred };
  Form form = Form::Widened;
  const uint8_t* lo = nullptr;  // InPlace, Grouped: A itself; Split: the low bits; Centred: d
  const int32_t* starts = nullptr;
  const uint16_t* hot = nullptr;
  const int32_t* row_const = nullptr;
  const uint16_t* w = nullptr;
  int64_t ld = 0, m = 0, kq = 0;

  void panel(const QPackedB& b, int64_t p, int64_t n, void* c, int64_t ldc, const QEpilogue& ep) const {
    switch (form) {
      case Form::InPlace: return qpanel_avx2_bytes(lo, ld, m, b.byte_panel(p), kq, n, c, ldc, ep);
      case Form::Grouped: return qpanel_avx2_grouped(lo, ld, m, b.byte_panel(p), kq, n, c, ldc, ep);
      case Form::Split: return qpanel_avx2_split(lo, ld, m, b.byte_panel(p), kq, n, starts, hot, c, ldc, ep);
      case Form::Centred:
        return qpanel_avx2_centred(reinterpret_cast<const int8_t*>(lo), ld, m, b.byte_panel(p), kq, n, starts, hot,
                                   row_const, b.col_sums() + p * b.panel_cols(), c, ldc, ep);
      case Form::Widened: break;
    }
    if (n <= 8) qpanel_avx2_w16_half(w, ld, m, b.panel(p), kq, n, c, ldc, ep);
    else qpanel_avx2_w16(w, ld, m, b.panel(p), kq, n, c, ldc, ep);
  }
};

Avx2Rows avx2_rows(const QPackedB& b, const uint8_t* a, int64_t lda, int64_t m, int64_t panels, Avx2RowsStore& st) {
  Avx2Rows r;
  const int64_t kp = b.kp();
  r.m = m;
  r.kq = kp / 4;
  if (b.byte_panel(0) && split_allowed()) {
    auto in_place = [&] {
      r.form = grouped_allowed() && qrows_groups_fit_avx2(a, lda, m, kp) ? Avx2Rows::Form::Grouped
                                                                         : Avx2Rows::Form::InPlace;
      r.lo = a;
      r.ld = lda;
      return r;
    };
    if (panels < split_min_panels()) {
      if (qrows_pairs_fit_avx2(a, lda, m, kp)) return in_place();
    } else {
      // The split form, else the centred one: each gives up once it has listed more than max_hot.
      const int64_t max_hot = m * kp / 64;
      uint8_t* lo = grown(st.lo, m * kp);
      int32_t* starts = grown(st.starts, m + 1);
      int32_t* row_const = grown(st.row_const, m);
      uint16_t* hot = grown(st.hot, max_hot + 1);
      r.ld = kp;
      r.lo = lo;
      r.starts = starts;
      r.hot = hot;
      if (qsplit_rows_avx2(a, lda, m, kp, lo, kp, starts, hot, max_hot)) {
        if (starts[m] == 0) return in_place();  // nothing listed: A as it is
        r.form = Avx2Rows::Form::Split;
        return r;
      }
      if (qcentre_rows_avx2(a, lda, m, kp, reinterpret_cast<int8_t*>(lo), kp, starts, hot, max_hot, row_const)) {
        r.form = Avx2Rows::Form::Centred;
        r.row_const = row_const;
        return r;
      }
    }
  }
  r.ld = avx2_widened_ld(kp);
  uint16_t* w = grown(st.widened, m * r.ld);
  qwiden_rows_avx2(a, lda, m, kp, w, r.ld);
  r.w = w;
  return r;
}

}  // namespace

bool switch_on(const char* name) {
  const char* e = std::getenv(name);
  return !(e && std::string_view(e) == "0");
}

int64_t QPackedB::storage_bytes(int64_t K, int64_t N, Int8Isa isa) {
  const int64_t cols = qpanel_cols(isa), kp = round_up(std::max<int64_t>(K, 1), 4);
  const int64_t panels = std::max<int64_t>((N + cols - 1) / cols, 1);
  // AVX2: the int16 pair layout (8 bytes per column and group of 4 k) and the byte layout (4) for
  // the rows that can take the byte kernel (avx2_rows); a narrow B takes the byte layout alone,
  // within the same bytes.
  const int64_t per_kq = isa != Int8Isa::Avx2 ? 4 : 12;
  return panels * (kp / 4) * cols * per_kq + 64;
}

QPackedB::QPackedB(const void* data, bool is_signed, int64_t K, int64_t N, int64_t ld, bool trans, Int8Isa isa)
    : isa_(isa), k_(K), kp_(round_up(std::max<int64_t>(K, 1), 4)), n_(N), panel_cols_(qpanel_cols(isa)) {
  const size_t total = static_cast<size_t>(storage_bytes(K, N, isa));
  owned_ = std::shared_ptr<int8_t[]>(new (std::align_val_t(64)) int8_t[total],
                                     [](int8_t* p) { ::operator delete[](p, std::align_val_t(64)); });
  owned_sums_.assign(static_cast<size_t>(N), 0);
  pack(data, is_signed, ld, trans, owned_.get(), owned_sums_.data());
}

QPackedB::QPackedB(const void* data, bool is_signed, int64_t K, int64_t N, int64_t ld, bool trans, Int8Isa isa,
                   int8_t* storage, int32_t* col_sums)
    : isa_(isa), k_(K), kp_(round_up(std::max<int64_t>(K, 1), 4)), n_(N), panel_cols_(qpanel_cols(isa)) {
  pack(data, is_signed, ld, trans, storage, col_sums);
}

namespace {

// Whether the signed B values (b(k, j) = value(k, j); uint8 weights shifted by -128) are narrow
// for vpmaddubsw (QPackedB::narrow): for every column and pair of k (2i, 2i + 1), the positive
// values sum to at most 128 and the negative ones to at least -128.
template <class Value>
bool narrow_pairs(int64_t K, int64_t N, const Value& value) {
  for (int64_t k = 0; k < K; k += 2) {
    for (int64_t j = 0; j < N; ++j) {
      const int32_t a = value(k, j), b = k + 1 < K ? value(k + 1, j) : 0;
      if (std::max(a, 0) + std::max(b, 0) > 128 || std::min(a, 0) + std::min(b, 0) < -128) return false;
    }
  }
  return true;
}

bool narrow_allowed() {
  static const bool allowed = switch_on("FUSOR_INT8_NARROW");
  return allowed;
}

}  // namespace

void QPackedB::pack(const void* data, bool is_signed, int64_t ld, bool trans, int8_t* dst_all, int32_t* sums) {
  const int64_t K = k_, N = n_;
  const auto* s8 = static_cast<const int8_t*>(data);
  const auto* u8 = static_cast<const uint8_t*>(data);
  auto value = [&](int64_t k, int64_t j) {
    const int64_t src = trans ? j * ld + k : k * ld + j;
    return is_signed ? static_cast<int32_t>(s8[src]) : static_cast<int32_t>(u8[src]) - 128;
  };
  narrow_ = isa_ == Int8Isa::Avx2 && narrow_allowed() && narrow_pairs(K, N, value);
  const Int8Isa lay = layout();
  const int64_t bytes_per_kq = lay == Int8Isa::Avx2 ? 8 : 4;  // per column and group of 4 k
  panel_stride_ = (kp_ / 4) * panel_cols_ * bytes_per_kq;
  std::memset(dst_all, 0, static_cast<size_t>(storage_bytes(K, N, isa_)));
  data_ = dst_all;
  col_sums_ = sums;
  shift_ = is_signed ? 0 : 128;
  // A wide AVX2 B also gets the byte layout, after the int16 panels (byte_panel).
  const bool byte_copy = lay == Int8Isa::Avx2;
  byte_data_ = narrow_ ? dst_all : byte_copy ? dst_all + panels() * panel_stride_ : nullptr;
  byte_stride_ = (kp_ / 4) * panel_cols_ * 4;
  if (lay == Int8Isa::Avx2) pack_int16(u8, is_signed, ld, trans, dst_all, sums);
  if (lay != Int8Isa::Avx2 || byte_copy) {
    int8_t* const dst = byte_data_ ? const_cast<int8_t*>(byte_data_) : dst_all;
    const int64_t stride = byte_data_ ? byte_stride_ : panel_stride_;
    int32_t* const byte_sums = byte_copy ? nullptr : sums;  // a byte copy: the int16 pass summed
    if (!trans) pack_rows_vnni(u8, is_signed, ld, dst, stride, byte_sums);
    else if (!byte_sums) pack_cols_vnni(u8, is_signed, ld, dst, stride);
    else pack_generic(value, Int8Isa::AvxVnni, dst, stride, byte_sums);
  }
}

template <class Value>
void QPackedB::pack_generic(const Value& value, Int8Isa lay, int8_t* dst_all, int64_t stride, int32_t* sums) const {
  for (int64_t p = 0; p < panels(); ++p) {
    const int64_t n0 = p * panel_cols_, w_real = std::min<int64_t>(panel_cols_, n_ - n0);
    const int64_t w = std::min<int64_t>(panel_cols_, round_up(w_real, 16));
    int8_t* dst = dst_all + p * stride;
    for (int64_t j = 0; j < w_real; ++j) {
      int32_t sum = 0;
      for (int64_t k = 0; k < k_; ++k) {
        const int32_t v = value(k, n0 + j);
        sum += v;
        const int64_t off = qpanel_offset(lay, k, j, w);
        if (lay == Int8Isa::Avx2) {
          const int16_t v16 = static_cast<int16_t>(v);
          std::memcpy(dst + off, &v16, 2);
        } else {
          dst[off] = static_cast<int8_t>(v);
        }
      }
      if (sums) sums[n0 + j] = sum;
    }
  }
}

void QPackedB::pack_int16(const uint8_t* src, bool is_signed, int64_t ld, bool trans, int8_t* dst_all,
                          int32_t* sums) const {
  // The AVX2 int16 layout ([k / 2][16 columns][2] per panel; a uint8 value u stored as u - 128, the
  // byte u ^ 0x80 sign-extended), 16 bytes of B per step (SSE2: this file is built for the
  // baseline): from a row-major B two rows interleaved, from a transposed one (attention's K^T) 16
  // k of a column at once. A B packed per call (attention's K^T and V) took 3.8% of bert_like_qdq's
  // time element by element.
  const int64_t K = k_, N = n_;
  const __m128i flip = _mm_set1_epi8(is_signed ? 0 : static_cast<char>(0x80)), ones = _mm_set1_epi16(1);
  auto widen_lo = [](__m128i x) { return _mm_srai_epi16(_mm_unpacklo_epi8(x, x), 8); };
  auto widen_hi = [](__m128i x) { return _mm_srai_epi16(_mm_unpackhi_epi8(x, x), 8); };
  auto scalar = [&](int64_t k, int64_t j) {
    const uint8_t b = trans ? src[j * ld + k] : src[k * ld + j];
    return static_cast<int32_t>(static_cast<int8_t>(b ^ (is_signed ? 0 : 0x80)));
  };
  auto at = [&](int8_t* panel, int64_t k, int64_t j) { return panel + ((k / 2) * 16 + j) * 4 + (k % 2) * 2; };
  for (int64_t p = 0; p < panels(); ++p) {
    const int64_t n0 = p * panel_cols_, w_real = std::min<int64_t>(panel_cols_, N - n0);
    int8_t* dst = dst_all + p * panel_stride_;
    if (!trans && w_real == 16) {
      __m128i sum[4] = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
      for (int64_t k = 0; k < K; k += 2) {
        const __m128i x0 = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k * ld + n0)), flip);
        const __m128i x1 =
            k + 1 < K ? _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + (k + 1) * ld + n0)), flip)
                      : _mm_setzero_si128();
        const __m128i lo = _mm_unpacklo_epi8(x0, x1), hi = _mm_unpackhi_epi8(x0, x1);
        const __m128i v[4] = {widen_lo(lo), widen_hi(lo), widen_lo(hi), widen_hi(hi)};
        auto* o = reinterpret_cast<__m128i*>(dst + (k / 2) * 64);
        for (int i = 0; i < 4; ++i) {
          _mm_storeu_si128(o + i, v[i]);
          sum[i] = _mm_add_epi32(sum[i], _mm_madd_epi16(v[i], ones));
        }
      }
      if (sums)
        for (int i = 0; i < 4; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(sums + n0 + 4 * i), sum[i]);
      continue;
    }
    for (int64_t j = 0; j < w_real; ++j) {
      int32_t total = 0;
      int64_t k = 0;
      if (trans) {
        // 16 k of column j: 8 pairs, each 4 bytes at its own row of pairs.
        const uint8_t* col = src + (n0 + j) * ld;
        __m128i acc = _mm_setzero_si128();
        for (; k + 16 <= K; k += 16) {
          const __m128i x = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(col + k)), flip);
          const __m128i e[2] = {widen_lo(x), widen_hi(x)};
          for (int h = 0; h < 2; ++h) {
            acc = _mm_add_epi32(acc, _mm_madd_epi16(e[h], ones));
            __m128i q = e[h];
            for (int i = 0; i < 4; ++i, q = _mm_srli_si128(q, 4)) {
              const int32_t pair = _mm_cvtsi128_si32(q);
              std::memcpy(at(dst, k + 8 * h + 2 * i, j), &pair, 4);
            }
          }
        }
        alignas(16) int32_t lanes[4];
        _mm_store_si128(reinterpret_cast<__m128i*>(lanes), acc);
        total = lanes[0] + lanes[1] + lanes[2] + lanes[3];
      }
      for (; k < K; ++k) {
        const int32_t v = scalar(k, n0 + j);
        total += v;
        const int16_t v16 = static_cast<int16_t>(v);
        std::memcpy(at(dst, k, j), &v16, 2);
      }
      if (sums) sums[n0 + j] = total;
    }
  }
}

void QPackedB::pack_cols_vnni(const uint8_t* src, bool is_signed, int64_t ld, int8_t* dst_all, int64_t stride) const {
  // B given transposed: a column's 4 k of a group are 4 consecutive source bytes, one 32-bit move
  // (flipped for uint8) per group and column; a last group of fewer than 4 k byte by byte.
  const int64_t K = k_, N = n_, K4 = K / 4 * 4;
  const uint32_t flip = is_signed ? 0u : 0x80808080u;
  for (int64_t p = 0; p < panels(); ++p) {
    const int64_t n0 = p * panel_cols_, w_real = std::min<int64_t>(panel_cols_, N - n0);
    const int64_t w = std::min<int64_t>(panel_cols_, round_up(w_real, 16));
    int8_t* dst = dst_all + p * stride;
    for (int64_t j = 0; j < w_real; ++j) {
      const uint8_t* col = src + (n0 + j) * ld;
      for (int64_t k = 0; k < K4; k += 4) {
        uint32_t v;
        std::memcpy(&v, col + k, 4);
        v ^= flip;
        std::memcpy(dst + ((k / 4) * w + j) * 4, &v, 4);
      }
      for (int64_t k = K4; k < K; ++k)
        dst[(k / 4 * w + j) * 4 + k % 4] = static_cast<int8_t>(col[k] ^ static_cast<uint8_t>(flip));
    }
  }
}

void QPackedB::pack_rows_vnni(const uint8_t* src, bool is_signed, int64_t ld, int8_t* dst_all, int64_t stride,
                              int32_t* sums) const {
  // B row-major (K x N): per panel and group of 4 k, four rows' bytes interleaved column by
  // column ([k / 4][w][k % 4]), 16 columns per step; a uint8 value u is stored as u - 128, which
  // as a byte is u ^ 0x80. The column sums from the same bytes, row by row.
  const int64_t K = k_, N = n_;
  const __m128i flip = _mm_set1_epi8(is_signed ? 0 : static_cast<char>(0x80));
  for (int64_t p = 0; p < panels(); ++p) {
    const int64_t n0 = p * panel_cols_, w_real = std::min<int64_t>(panel_cols_, N - n0);
    const int64_t w = std::min<int64_t>(panel_cols_, round_up(w_real, 16));
    int8_t* dst = dst_all + p * stride;
    for (int64_t k0 = 0; k0 < K; k0 += 4) {
      const uint8_t* r[4];
      for (int i = 0; i < 4; ++i) r[i] = k0 + i < K ? src + (k0 + i) * ld + n0 : nullptr;
      int8_t* q = dst + (k0 / 4) * w * 4;
      int64_t j = 0;
      for (; j + 16 <= w_real; j += 16) {
        __m128i v[4];
        for (int i = 0; i < 4; ++i)
          v[i] = r[i] ? _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r[i] + j)), flip)
                      : _mm_setzero_si128();
        const __m128i a = _mm_unpacklo_epi8(v[0], v[1]), b = _mm_unpackhi_epi8(v[0], v[1]);
        const __m128i c = _mm_unpacklo_epi8(v[2], v[3]), d = _mm_unpackhi_epi8(v[2], v[3]);
        auto* o = reinterpret_cast<__m128i*>(q + j * 4);
        _mm_storeu_si128(o, _mm_unpacklo_epi16(a, c));
        _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(a, c));
        _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(b, d));
        _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(b, d));
      }
      for (; j < w_real; ++j)
        for (int i = 0; i < 4; ++i) q[j * 4 + i] = r[i] ? static_cast<int8_t>(r[i][j] ^ (is_signed ? 0 : 0x80)) : 0;
    }
  }
  if (!sums) return;
  std::fill(sums, sums + N, 0);
  for (int64_t k = 0; k < K; ++k) {
    const uint8_t* row = src + k * ld;
    if (is_signed) {
      for (int64_t j = 0; j < N; ++j) sums[j] += static_cast<int8_t>(row[j]);
    } else {
      for (int64_t j = 0; j < N; ++j) sums[j] += static_cast<int32_t>(row[j]) - 128;
    }
  }
}

void qepilogue_scalar(const QEpilogue& ep, int64_t m, int64_t n, int32_t raw, void* c, int64_t ldc) {
  int32_t acc = raw + ep.col_offset[n];
  if (ep.row_sums) acc -= ep.col_bzero[n] * ep.row_sums[m];
  const int64_t at = m * ldc + n;
  switch (ep.out) {
    case QEpilogue::Out::S32: static_cast<int32_t*>(c)[at] = acc; return;
    case QEpilogue::Out::F32:
      static_cast<float*>(c)[at] = apply_activation(ep.act, static_cast<float>(acc) * ep.mult[n] + ep.add[n]);
      return;
    case QEpilogue::Out::U8:
    case QEpilogue::Out::S8: break;
  }
  float f = static_cast<float>(acc) * ep.mult[n] + ep.add[n];
  if (ep.residual) {
    const float t = std::clamp(std::nearbyint(f), static_cast<float>(ep.cmin), static_cast<float>(ep.cmax));
    const uint8_t rb = ep.residual[m * ep.residual_ld + n];
    const float r = ep.out == QEpilogue::Out::S8 ? static_cast<float>(static_cast<int8_t>(rb)) : static_cast<float>(rb);
    f = t * ep.res_t + r * ep.res_z + ep.res_c;
  }
  const int32_t q = std::clamp(static_cast<int32_t>(std::nearbyint(std::clamp(f, -1e9f, 1e9f))), ep.qmin, ep.qmax);
  static_cast<uint8_t*>(c)[at] = static_cast<uint8_t>(q);
}

void qpanel_scalar(const uint8_t* a, int64_t lda, int64_t m, const int8_t* panel, int64_t kq, int64_t n, void* c,
                   int64_t ldc, const QEpilogue& ep) {
  const int64_t w = std::min<int64_t>(qpanel_cols(Int8Isa::Scalar), round_up(n, 16));
  for (int64_t i = 0; i < m; ++i) {
    const uint8_t* ar = a + i * lda;
    for (int64_t j = 0; j < n; ++j) {
      int32_t acc = 0;
      for (int64_t k = 0; k < kq * 4; ++k) acc += static_cast<int32_t>(ar[k]) * panel[qpanel_offset(Int8Isa::Scalar, k, j, w)];
      qepilogue_scalar(ep, i, j, acc, c, ldc);
    }
  }
}

void qgemm_rows(const QPackedB& b, const uint8_t* a, int64_t lda, int64_t m, void* c, int64_t ldc,
                const QEpilogue& ep) {
  qgemm_rows(b, a, lda, m, c, ldc, ep, 0, b.panels());
}

void qgemm_rows(const QPackedB& b, const uint8_t* a, int64_t lda, int64_t m, void* c, int64_t ldc,
                const QEpilogue& ep, int64_t p0, int64_t p1) {
  const QPanelFn fn = panel_fn(b);
  const int64_t esize = ep.out_bytes();
  p1 = std::min(p1, b.panels());
  if (b.layout() == Int8Isa::Avx2) {
    // Rows prepared once for all the panels (split or widened), in runs that keep them in L2.
    const int64_t run = avx2_widened_rows(b.kp());
    for (int64_t i = 0; i < m; i += run) {
      const int64_t mi = std::min(run, m - i);
      thread_local Avx2RowsStore store;
      const Avx2Rows rows = avx2_rows(b, a + i * lda, lda, mi, p1 - p0, store);
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t n0 = p * b.panel_cols(), n = std::min<int64_t>(b.panel_cols(), b.n() - n0);
        rows.panel(b, p, n, static_cast<char*>(c) + (i * ldc + n0) * esize, ldc, ep.offset(i, n0));
      }
    }
    return;
  }
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t n0 = p * b.panel_cols(), n = std::min<int64_t>(b.panel_cols(), b.n() - n0);
    fn(a, lda, m, b.panel(p), b.kp() / 4, n, static_cast<char*>(c) + n0 * esize, ldc, ep.offset(0, n0));
  }
}

bool qgemm_segmented_supported(Int8Isa isa) { return isa == Int8Isa::Avx512Vnni; }

void qgemm_rows_segmented(const QPackedB& b, const uint8_t* const* rows, int64_t nseg, int64_t seg_stride, int64_t m,
                          void* c, int64_t ldc, const QEpilogue& ep, int64_t p0, int64_t p1) {
  if (!qgemm_segmented_supported(b.isa()) || nseg <= 0 || b.k() % (4 * nseg) != 0)
    throw_internal("qgemm_rows_segmented: needs AVX512-VNNI and segments of whole groups of 4 bytes");
  const int64_t esize = ep.out_bytes();
  const QAmxRows* tiles = qamx_seg_tiles(rows, nseg, seg_stride, m, b.kp() / 4);
  for (int64_t p = p0; p < std::min(p1, b.panels()); ++p) {
    const int64_t n0 = p * b.panel_cols(), n = std::min<int64_t>(b.panel_cols(), b.n() - n0);
    qpanel_seg_avx512vnni(rows, nseg, seg_stride, m, b.panel(p), b.kp() / 4, n, static_cast<char*>(c) + n0 * esize,
                          ldc, ep.offset(0, n0), tiles);
  }
}

void qgemm(const QPackedB& b, const uint8_t* a, int64_t lda, int64_t M, void* c, int64_t ldc, const QEpilogue& ep,
           ThreadPool* pool) {
  if (M <= 0 || b.n() <= 0) return;
  const QPanelFn fn = panel_fn(b);
  const int64_t esize = ep.out_bytes();
  // AVX2 (a wide B) prepares a task's rows once for a group of panels, split or widened
  // (avx2_rows above); the other paths read A as it is, one panel per task.
  const bool prepared = b.layout() == Int8Isa::Avx2;
  // Rows per task: a multiple of most kernels' row tiles (5-row: one 1-row tile; AVX2's 6-row).
  const int64_t rb = prepared ? std::min<int64_t>(96, avx2_widened_rows(b.kp())) : 96;
  const int64_t row_blocks = (M + rb - 1) / rb, panels = b.panels();
  int64_t pg = 1;  // panels per task
  const int threads = pool ? pool->num_threads() : 1;
  if (prepared) {
    // All of them unless the row blocks are too few to give every thread ~4 tasks (one thread:
    // all of them; splitting only repeated the preparation).
    const int64_t want = threads > 1 ? 4 * threads : 1;
    const int64_t split = std::clamp<int64_t>((want + row_blocks - 1) / row_blocks, 1, panels);
    pg = (panels + split - 1) / split;
  }
  const int64_t pgroups = (panels + pg - 1) / pg;
  const int64_t tasks = row_blocks * pgroups;
  // A float result's activation other than a clamp (GELU after a quantized FF1 layer) runs as a
  // vectorized pass over each task's block while it is in cache: the tiles' epilogue applies such
  // activations one element at a time (a dynamically quantized bert_like's FF1 with GELU took 2.2 ms
  // against 0.39 ms for FF2 of the same size).
  const bool act_pass = ep.out == QEpilogue::Out::F32 && !ep.act_is_clamp();
  QEpilogue tile_ep = ep;
  Epilogue act;
  if (act_pass) {
    tile_ep.act = ActivationSpec{};
    act.act = ep.act;
  }
  // Enough work per task to pay for the dispatch: about 256k multiply-adds.
  const int64_t macs_per_task = std::min(rb, M) * pg * b.panel_cols() * b.kp();
  const int64_t grain = std::max<int64_t>(1, (1 << 18) / std::max<int64_t>(1, macs_per_task));
  // Contiguous runs of row blocks per thread (slots), so consecutive ops keep their rows on one core.
  const int nt = pool ? static_cast<int>(std::min<int64_t>(threads, tasks / grain)) : 1;
  // With the panels split, every row block is prepared once, before the tasks (one per thread at a
  // time), and its tasks share it (each task preparing its own rows did it pgroups times: 4 times
  // on bert_like_qdq's 128-row projections at 2 threads). The stores are the calling thread's,
  // reached through references taken here: inside the lambdas, which run on the pool's threads, a
  // thread_local name would be that thread's own.
  thread_local std::vector<Avx2RowsStore> shared_stores;
  thread_local std::vector<Avx2Rows> shared_rows;
  std::vector<Avx2RowsStore>& stores = shared_stores;
  std::vector<Avx2Rows>& block_rows = shared_rows;
  const bool shared = prepared && pgroups > 1;
  if (shared) {
    if (stores.size() < static_cast<size_t>(row_blocks)) stores.resize(static_cast<size_t>(row_blocks));
    block_rows.assign(static_cast<size_t>(row_blocks), Avx2Rows{});
    auto prepare = [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t m0 = r * rb;
        block_rows[static_cast<size_t>(r)] =
            avx2_rows(b, a + m0 * lda, lda, std::min(rb, M - m0), panels, stores[static_cast<size_t>(r)]);
      }
    };
    if (nt > 1 && row_blocks > 1) pool->parallel_for(row_blocks, prepare, 1);
    else prepare(0, row_blocks);
  }
  auto run = [&](int64_t t0, int64_t t1) {
    thread_local Avx2RowsStore store;  // the running thread's, for rows prepared per task
    for (int64_t t = t0; t < t1; ++t) {
      // Panels inner: a row block's A stays in cache while the panels pass.
      const int64_t r = t / pgroups, p0 = (t % pgroups) * pg, p1 = std::min(panels, p0 + pg);
      const int64_t m0 = r * rb, m = std::min(rb, M - m0);
      Avx2Rows rows;
      if (shared) rows = block_rows[static_cast<size_t>(r)];
      else if (prepared) rows = avx2_rows(b, a + m0 * lda, lda, m, p1 - p0, store);
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t n0 = p * b.panel_cols(), n = std::min<int64_t>(b.panel_cols(), b.n() - n0);
        char* block = static_cast<char*>(c) + (m0 * ldc + n0) * esize;
        if (prepared) rows.panel(b, p, n, block, ldc, tile_ep.offset(m0, n0));
        else fn(a + m0 * lda, lda, m, b.panel(p), b.kp() / 4, n, block, ldc, tile_ep.offset(m0, n0));
        if (act_pass) apply_epilogue(reinterpret_cast<float*>(block), ldc, m, n, act);
      }
    }
  };
  if (nt > 1) {
    SlotTasks slot_tasks(tasks, nt);
    pool->parallel_for_slots(nt, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) slot_tasks.run(static_cast<int>(t), [&](int64_t task) { run(task, task + 1); });
    });
  } else {
    run(0, tasks);
  }
}

void qgemm_row_sums(const uint8_t* a, int64_t lda, int64_t M, int64_t K, int32_t* out) {
  for (int64_t m = 0; m < M; ++m) {
    int32_t s = 0;
    for (int64_t k = 0; k < K; ++k) s += a[m * lda + k];
    out[m] = s;
  }
}

void qgemm_pack_rows(const uint8_t* a, int64_t lda, int64_t M, int64_t K, int64_t kp, uint8_t* out) {
  for (int64_t m = 0; m < M; ++m) {
    std::memcpy(out + m * kp, a + m * lda, static_cast<size_t>(K));
    std::memset(out + m * kp + K, 0, static_cast<size_t>(kp - K));
  }
}

}  // namespace fusor::int8
