#include "kernels/common/axes.h"

#include <algorithm>

#include "core/util/error.h"

namespace fusor {

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& where) {
  if (axis < -rank || axis >= rank)
    throw_bad_input(where + ": axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank, const std::string& where) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t a : axes) out.push_back(normalize_axis(a, rank, where));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) throw_bad_input(where + ": repeated axis");
  return out;
}

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int64_t i = static_cast<int64_t>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

int64_t dims_product(const Shape& s, int64_t begin, int64_t end) {
  int64_t p = 1;
  for (int64_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

}  // namespace fusor
