// fusor's int8 GEMM core: C = epilogue(A x B) with A uint8 (activations, M x K, row-major), B
// 8-bit weights (K x N) packed once, 32-bit integer accumulation, and the requantization (or a
// float or int32 result) applied to each tile while it is in registers.
//
// Paths (kernels/cpu_features.h, active_int8_isa()): AVX512-VNNI (vpdpbusd on ZMM: 4 k-values per
// 32-bit lane, panels of up to 64 columns), AVX-VNNI (the same on YMM, panels of 16), AVX2
// (vpmaddwd on 16-bit operands, panels of 16: exact, unlike vpmaddubsw whose 16-bit pair sums
// saturate for large weights) and scalar; on AVX512-VNNI machines with AMX (active_int8_amx()),
// the bulk of K for whole 16-row tiles by AMX tile products on the same panels
// (kernels/int8/qgemm_amx.cpp). Panel layout (VNNI and scalar): per panel, per group of
// 4 k, the panel's columns each as 4 consecutive bytes; AVX2: per pair of k, columns as 2 int16.
// Rows past K are zero.
//
// Zero points: the kernels multiply raw A bytes by signed B bytes (uint8 weights are stored minus
// 128, their zero point moved by 128). With a = A's zero point and b[n] B's (per column):
//     sum_k (A[m,k] - a)(B[k,n] - b[n]) = raw[m,n] - a * colsum[n] - b[n] * rowsum[m] + K a b[n]
// The column terms are folded into QEpilogue::col_offset by the caller (QPackedB::col_sums);
// rowsum[m] is needed only when some b[n] != 0 (QEpilogue::row_sums, computed per call).
//
// A is read 4 bytes at a time up to K rounded up to 4 (QPackedB::kp): rows must be readable that
// far; callers pad (qgemm_pack_rows) when K % 4 != 0. The values read past K do not matter (B's rows
// there are zero) but row_sums must cover the real K only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/epilogue.h"

namespace fusor {

class ThreadPool;

namespace int8 {

// B packed for one Int8Isa. Built from a K x N matrix (or N x K with trans) of int8 or uint8.
class QPackedB {
 public:
  QPackedB() = default;
  // b(k, n) = data[k * ld + n], or data[n * ld + k] with trans. Owns its storage.
  QPackedB(const void* data, bool is_signed, int64_t K, int64_t N, int64_t ld, bool trans, Int8Isa isa);
  // The same into caller storage (storage_bytes(K, N, isa) bytes, 64-byte aligned, and N int32 for
  // the column sums), for operands packed per call from a kernel's scratch.
  QPackedB(const void* data, bool is_signed, int64_t K, int64_t N, int64_t ld, bool trans, Int8Isa isa,
           int8_t* storage, int32_t* col_sums);
  static int64_t storage_bytes(int64_t K, int64_t N, Int8Isa isa);

  bool empty() const { return !data_; }
  Int8Isa isa() const { return isa_; }
  int64_t k() const { return k_; }
  int64_t kp() const { return kp_; }       // K rounded up to 4
  int64_t n() const { return n_; }
  int panel_cols() const { return panel_cols_; }
  int64_t panels() const { return (n_ + panel_cols_ - 1) / panel_cols_; }
  // Bytes of one full panel.
  int64_t panel_stride() const { return panel_stride_; }
  const int8_t* panel(int64_t p) const { return data_ + p * panel_stride_; }
  // sum_k of the stored (signed) value per column; the shift uint8 weights were stored with (128 or 0).
  const int32_t* col_sums() const { return owned_sums_.empty() ? col_sums_ : owned_sums_.data(); }
  int32_t shift() const { return shift_; }
  // AVX2 only: every pair of k of every column can meet any uint8 A without its two products'
  // int16 sum saturating (positive weights of the pair summing to at most 128, negative ones to at
  // least -128). Such B is stored in the VNNI byte layout and multiplied by vpmaddubsw, which is
  // exact for it; other B is stored as int16 and multiplied by vpmaddwd. FUSOR_INT8_NARROW=0
  // keeps every B in the int16 form (for comparisons).
  bool narrow() const { return narrow_; }
  // The packed layout: isa(), or AvxVnni's byte layout for a narrow AVX2 B.
  Int8Isa layout() const { return narrow_ ? Int8Isa::AvxVnni : isa_; }
  // AVX2 only: panel p in the byte layout (AvxVnni's), which a wide B also has beside its int16
  // panels, for the rows of A that can take the byte kernel (qgemm.cpp, avx2_rows: by the sums of
  // their pairs of k); null otherwise.
  const int8_t* byte_panel(int64_t p) const { return byte_data_ ? byte_data_ + p * byte_stride_ : nullptr; }

 private:
  void pack(const void* data, bool is_signed, int64_t ld, bool trans, int8_t* dst, int32_t* sums);
  // pack()'s vector path for the VNNI/scalar layout of a row-major B, panels stride bytes apart;
  // sums null: no column sums (pack_generic likewise).
  void pack_rows_vnni(const uint8_t* src, bool is_signed, int64_t ld, int8_t* dst_all, int64_t stride,
                      int32_t* sums) const;
  // pack()'s VNNI layout of a transposed B (data[n * ld + k]), without column sums.
  void pack_cols_vnni(const uint8_t* src, bool is_signed, int64_t ld, int8_t* dst_all, int64_t stride) const;
  // pack()'s AVX2 int16 layout (panel_stride apart) of any B, 16 bytes at a time where it can;
  // sums null: no column sums.
  void pack_int16(const uint8_t* src, bool is_signed, int64_t ld, bool trans, int8_t* dst_all, int32_t* sums) const;
  // Any B, element by element (value(k, j): the stored signed value), into layout lay.
  template <class Value>
  void pack_generic(const Value& value, Int8Isa lay, int8_t* dst_all, int64_t stride, int32_t* sums) const;

  std::shared_ptr<int8_t[]> owned_;
  std::vector<int32_t> owned_sums_;
  const int8_t* data_ = nullptr;
  const int8_t* byte_data_ = nullptr;
  int64_t byte_stride_ = 0;
  const int32_t* col_sums_ = nullptr;
  Int8Isa isa_ = Int8Isa::Scalar;
  int64_t k_ = 0, kp_ = 0, n_ = 0, panel_stride_ = 0;
  int panel_cols_ = 16;
  int32_t shift_ = 0;
  bool narrow_ = false;
};

// What happens to acc[m, n] = raw[m, n] + col_offset[n] (- col_bzero[n] * row_sums[m]):
//   U8/S8:  f = acc * mult[n] + add[n]; without a residual y = clamp(round(f), qmin, qmax);
//           with one (the residual Add of a QDQ graph), t = clamp(round(f), cmin, cmax) is the
//           quantized conv output and y = clamp(round(t * res_t + R[m, n] * res_z + res_c), qmin, qmax)
//   F32:    y = act(acc * mult[n] + add[n])
//   S32:    y = acc
// round is to nearest, ties to even. Arrays are indexed from the call's first row/column.
struct QEpilogue {
  enum class Out : uint8_t { U8, S8, F32, S32 };
  Out out = Out::U8;
  const int32_t* col_offset = nullptr;  // required
  const int32_t* col_bzero = nullptr;   // with row_sums
  const int32_t* row_sums = nullptr;
  const float* mult = nullptr;          // required for U8/S8/F32
  const float* add = nullptr;           // required for U8/S8/F32
  int32_t qmin = 0, qmax = 255;
  const uint8_t* residual = nullptr;    // U8/S8 only; same signedness as the output
  int64_t residual_ld = 0;
  float res_t = 0, res_z = 0, res_c = 0;
  int32_t cmin = 0, cmax = 255;
  ActivationSpec act;                   // F32 only

  // Bytes of one output element.
  int64_t out_bytes() const { return out == Out::U8 || out == Out::S8 ? 1 : 4; }
  bool act_is_clamp() const {
    return act.kind == Activation::None || act.kind == Activation::Relu || act.kind == Activation::Clip;
  }
  QEpilogue offset(int64_t row0, int64_t col0) const {
    QEpilogue e = *this;
    e.col_offset += col0;
    if (e.col_bzero) e.col_bzero += col0;
    if (e.row_sums) e.row_sums += row0;
    if (e.mult) e.mult += col0;
    if (e.add) e.add += col0;
    if (e.residual) e.residual += row0 * residual_ld + col0;
    return e;
  }
};

// The scalar definition of the epilogue, for one element.
void qepilogue_scalar(const QEpilogue& ep, int64_t m, int64_t n, int32_t raw, void* c, int64_t ldc);

// Rows [0, m) of C = A x B, all columns, on the calling thread. a: m rows of lda bytes (kp
// readable); c: m rows of ldc elements of the output type.
void qgemm_rows(const QPackedB& b, const uint8_t* a, int64_t lda, int64_t m, void* c, int64_t ldc,
                const QEpilogue& ep);
// The same for panels [p0, p1) of B only (c and ep still at column 0).
void qgemm_rows(const QPackedB& b, const uint8_t* a, int64_t lda, int64_t m, void* c, int64_t ldc,
                const QEpilogue& ep, int64_t p0, int64_t p1);

// Rows given by pointers (an implicit-GEMM convolution reads its taps in place): row i of A is
// nseg segments of K / nseg bytes, segment s at rows[i] + s * seg_stride; K % (4 * nseg) == 0
// (so kp == K and nothing past a segment is read). Panels [p0, p1), as qgemm_rows. Only on the
// ISAs where qgemm_segmented_supported (AVX512-VNNI).
bool qgemm_segmented_supported(Int8Isa isa);
void qgemm_rows_segmented(const QPackedB& b, const uint8_t* const* rows, int64_t nseg, int64_t seg_stride, int64_t m,
                          void* c, int64_t ldc, const QEpilogue& ep, int64_t p0, int64_t p1);

// The same for M rows, spread over the pool (nullptr: the calling thread). A float result's
// activation other than a clamp runs as a vectorized pass over each task's block. Columns [n0, n1)
// of B only when n1 > n0 (c then points at column n0; ep's column arrays at n0 too).
void qgemm(const QPackedB& b, const uint8_t* a, int64_t lda, int64_t M, void* c, int64_t ldc, const QEpilogue& ep,
           ThreadPool* pool);

// sum_k a[m, k] for k < K, per row (row_sums for zero points of B).
void qgemm_row_sums(const uint8_t* a, int64_t lda, int64_t M, int64_t K, int32_t* out);

// Whether the comparison switch `name` (an environment variable: FUSOR_INT8_GROUPED, _SPLIT,
// _NARROW, _WINOGRAD) is on: unset or anything but "0".
bool switch_on(const char* name);

// Copies rows of K bytes into rows of kp bytes (zero-padded), the A layout the kernels read.
void qgemm_pack_rows(const uint8_t* a, int64_t lda, int64_t M, int64_t K, int64_t kp, uint8_t* out);

}  // namespace int8
}  // namespace fusor
