#include "kernels/common/strided_copy.h"

#include "kernels/common/dtype_dispatch.h"

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
}  // namespace

void strided_copy(const Tensor& src, int64_t base, const std::vector<int64_t>& src_strides, Tensor& dst) {
  if (src.dtype() == DataType::String) {
    const auto& s = src.string_data();
    auto& d = dst.string_data();
    walk(dst.shape(), base, src_strides, [&](int64_t i, int64_t off) { d[i] = s[off]; });
    return;
  }
  dispatch_by_size(src.dtype(), "strided_copy", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* ps = src.data<T>();
    T* pd = dst.data<T>();
    walk(dst.shape(), base, src_strides, [&](int64_t i, int64_t off) { pd[i] = ps[off]; });
  });
}

}  // namespace fusor
