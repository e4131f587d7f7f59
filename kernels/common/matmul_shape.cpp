#include "kernels/common/matmul_shape.h"

#include "core/util/error.h"

namespace fusor {

int64_t MatMulShape::matrix_index(int64_t i, const Shape& src) const {
  // Decode i over `batch` (row-major) and re-encode over `src`, where broadcast dims are 1.
  int64_t index = 0, stride = 1;
  for (int d = static_cast<int>(batch.size()) - 1; d >= 0; --d) {
    const int64_t coord = i % batch[d];
    i /= batch[d];
    if (src[d] != 1) index += coord * stride;
    stride *= src[d];
  }
  return index;
}

MatMulShape matmul_shape(const Shape& a_in, const Shape& b_in, const std::string& where) {
  if (a_in.empty() || b_in.empty())
    throw_bad_input(where + ": MatMul operands must have rank >= 1, got " + shape_str(a_in) + " and " + shape_str(b_in));
  Shape a = a_in, b = b_in;
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  MatMulShape s;
  s.M = a[a.size() - 2];
  s.K = a[a.size() - 1];
  s.N = b[b.size() - 1];
  if (b[b.size() - 2] != s.K)
    throw_bad_input(where + ": inner dimensions differ: " + shape_str(a_in) + " x " + shape_str(b_in));
  const size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
  s.a_batch.assign(r - ra, 1);
  s.a_batch.insert(s.a_batch.end(), a.begin(), a.begin() + ra);
  s.b_batch.assign(r - rb, 1);
  s.b_batch.insert(s.b_batch.end(), b.begin(), b.begin() + rb);
  s.batch.resize(r);
  for (size_t d = 0; d < r; ++d) {
    const int64_t x = s.a_batch[d], y = s.b_batch[d];
    if (x != y && x != 1 && y != 1)
      throw_bad_input(where + ": batch dimensions cannot be broadcast: " + shape_str(a_in) + " x " + shape_str(b_in));
    s.batch[d] = x == 1 ? y : x;
  }
  s.out = s.batch;
  if (!a_vec) s.out.push_back(s.M);
  if (!b_vec) s.out.push_back(s.N);
  return s;
}

}  // namespace fusor
