#include "kernels/common/strided_copy.h"

#include <algorithm>
#include <cstring>

#include "kernels/common/dtype_dispatch.h"
#include "kernels/common/transpose_tile.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {
template <class Move>
void walk(const Shape& out, int64_t base, const std::vector<int64_t>& st, Move&& move) {
  const int rank = static_cast<int>(out.size());
  const int64_t n = shape_numel(out);
  std::vector<int64_t> counter(rank, 0);
  int64_t off = base;
  for (int64_t i = 0; i < n; ++i) {
    move(i, off);
    for (int d = rank - 1; d >= 0; --d) {
      if (++counter[d] < out[d]) {
        off += st[d];
        break;
      }
      off -= st[d] * (out[d] - 1);
      counter[d] = 0;
    }
  }
}

// The copy as rows: dims[0..k) outer (sizes and source strides), then `len` elements a row with
// source stride `step`. Size-1 dims dropped, dims that continue each other merged.
struct Rows {
  std::vector<int64_t> size, stride;  // outer dims, outermost first
  int64_t len = 1, step = 0, count = 1;
};

Rows rows_of(const Shape& out, const std::vector<int64_t>& st) {
  std::vector<int64_t> sz, sd;
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    if (!sz.empty() && sd.back() == st[d] * out[d]) {  // the previous dim steps over this one whole
      sz.back() *= out[d];
      sd.back() = st[d];
      continue;
    }
    sz.push_back(out[d]);
    sd.push_back(st[d]);
  }
  Rows r;
  if (sz.empty()) return r;
  r.len = sz.back();
  r.step = sd.back();
  sz.pop_back();
  sd.pop_back();
  for (int64_t s : sz) r.count *= s;
  r.size = std::move(sz);
  r.stride = std::move(sd);
  return r;
}

// The source offset of row `row` (an odometer start over the outer dims).
int64_t row_offset(const Rows& r, int64_t base, int64_t row) {
  int64_t off = base;
  for (int d = static_cast<int>(r.size.size()) - 1; d >= 0; --d) {
    off += (row % r.size[d]) * r.stride[d];
    row /= r.size[d];
  }
  return off;
}

// n bytes, n a common short row's size inlined as fixed-size moves (a library call per row of
// 16 floats cost more than the copy: a patch-embedding Transpose copies 64-byte rows).
inline void copy_bytes(void* d, const void* s, size_t n) {
  switch (n) {
    case 4: std::memcpy(d, s, 4); return;
    case 8: std::memcpy(d, s, 8); return;
    case 12: std::memcpy(d, s, 12); return;
    case 16: std::memcpy(d, s, 16); return;
    case 32: std::memcpy(d, s, 32); return;
    case 48: std::memcpy(d, s, 48); return;
    case 64: std::memcpy(d, s, 64); return;
    case 128: std::memcpy(d, s, 128); return;
    default: std::memcpy(d, s, n);
  }
}

// Rows in runs along the innermost outer dim (a fixed source stride), one odometer start per run
// instead of an odometer step per row.
template <class T>
void copy_rows(const Rows& r, const T* src, int64_t base, T* dst, int64_t row0, int64_t row1) {
  const int64_t m = r.size.empty() ? 1 : r.size.back(), ms = r.size.empty() ? 0 : r.stride.back();
  const int64_t len = r.len, step = r.step;
  const size_t bytes = static_cast<size_t>(len) * sizeof(T);
  for (int64_t row = row0; row < row1;) {
    const int64_t nb = std::min<int64_t>(m - row % m, row1 - row);
    const T* in = src + row_offset(r, base, row);
    T* out = dst + row * len;
    if (step == 1) {
      for (int64_t i = 0; i < nb; ++i) copy_bytes(out + i * len, in + i * ms, bytes);
    } else {
      for (int64_t i = 0; i < nb; ++i)
        for (int64_t q = 0; q < len; ++q) out[i * len + q] = in[i * ms + q * step];
    }
    row += nb;
  }
}
// A transpose: the innermost outer dim (m rows) is contiguous in the source and the rows gather
// with stride `step`, so row i of a run is source column i. Copied in blocks of up to 16 rows x
// the row, 4 x 4 elements at a time (4-byte elements, transpose_4x4), so every source line read
// serves 4..16 rows instead of one.
bool is_transpose(const Rows& r) {
  return !r.size.empty() && r.stride.back() == 1 && r.step != 1 && r.size.back() >= 4 && r.len >= 4;
}

template <class T>
void transpose_rows(const Rows& r, const T* src, int64_t base, T* dst, int64_t row0, int64_t row1) {
  const int64_t m = r.size.back(), len = r.len, step = r.step;
  for (int64_t row = row0; row < row1;) {
    const int64_t nb = std::min<int64_t>({16, m - row % m, row1 - row});
    const T* in = src + row_offset(r, base, row);  // row i's element j: in[i + j * step]
    T* out = dst + row * len;                      // row i's element j: out[i * len + j]
    int64_t j = 0;
    if constexpr (sizeof(T) == 4 && kHaveTranspose4x4) {
      for (; j + 4 <= len; j += 4) {
        int64_t i = 0;
        for (; i + 4 <= nb; i += 4) transpose_4x4(in + i + j * step, step, out + i * len + j, len);
        for (; i < nb; ++i)
          for (int64_t q = 0; q < 4; ++q) out[i * len + j + q] = in[i + (j + q) * step];
      }
    }
    for (; j < len; j += 16) {
      const int64_t je = std::min<int64_t>(len, j + 16);
      for (int64_t i = 0; i < nb; ++i)
        for (int64_t q = j; q < je; ++q) out[i * len + q] = in[i + q * step];
    }
    row += nb;
  }
}
// A transpose into rows of 2 or 3 elements (an image's channels moved last: NCHW -> NHWC on 3
// channels), which is_transpose leaves to the gather loop: row i's L elements come from L
// source lines read in step, with L fixed so that the loop keeps them in registers instead of a
// row's setup per 3 elements.
bool is_narrow_transpose(const Rows& r) {
  return !r.size.empty() && r.stride.back() == 1 && r.step != 1 && (r.len == 2 || r.len == 3);
}

template <class T, int L>
void narrow_rows(const Rows& r, const T* src, int64_t base, T* dst, int64_t row0, int64_t row1) {
  const int64_t m = r.size.back(), step = r.step;
  for (int64_t row = row0; row < row1;) {
    const int64_t nb = std::min<int64_t>(m - row % m, row1 - row);
    const T* in = src + row_offset(r, base, row);
    T* out = dst + row * L;
    for (int64_t i = 0; i < nb; ++i)
      for (int q = 0; q < L; ++q) out[i * L + q] = in[i + q * step];
    row += nb;
  }
}
}  // namespace

void strided_copy(const Tensor& src, int64_t base, const std::vector<int64_t>& src_strides, Tensor& dst,
                  ThreadPool* pool) {
  if (dst.numel() == 0) return;
  if (src.dtype() == DataType::String) {
    const auto& s = src.string_data();
    auto& d = dst.string_data();
    walk(dst.shape(), base, src_strides, [&](int64_t i, int64_t off) { d[i] = s[off]; });
    return;
  }
  const Rows r = rows_of(dst.shape(), src_strides);
  dispatch_by_size(src.dtype(), "strided_copy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* ps = src.data<T>();
    T* pd = dst.data<T>();
    const bool transpose = is_transpose(r), narrow = is_narrow_transpose(r);
    auto some = [&](int64_t r0, int64_t r1) {
      if (transpose) transpose_rows(r, ps, base, pd, r0, r1);
      else if (narrow && r.len == 2) narrow_rows<T, 2>(r, ps, base, pd, r0, r1);
      else if (narrow) narrow_rows<T, 3>(r, ps, base, pd, r0, r1);
      else copy_rows(r, ps, base, pd, r0, r1);
    };
    // ~1 ns per 4 floats streamed by memcpy or moved by the blocked transpose, ~1 ns per element
    // gathered; 20 ns a row, 4 for contiguous rows copied in runs (a patch embedding's 64-byte
    // rows: 4.3 ns each, warm), a narrow transpose's rows about 1 ns.
    const double row_ns =
        narrow ? 1.0
               : (r.step == 1 && !transpose ? 4.0 : 20.0) +
                     static_cast<double>(r.len * static_cast<int64_t>(sizeof(T))) / (r.step == 1 || transpose ? 16.0 : 4.0);
    if (pool && r.count > 1) pool->parallel_for_cost(r.count, row_ns, some);
    else some(0, r.count);
  });
}

}  // namespace fusor
