#include "kernels/common/broadcast.h"

#include <algorithm>

#include "core/util/error.h"

namespace fusor {

Shape broadcast_shapes(const std::vector<Shape>& shapes, const std::string& where) {
  size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes) {
    size_t off = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& o = out[off + d];
      if (s[d] == o || s[d] == 1) continue;
      if (o == 1) {
        o = s[d];
        continue;
      }
      std::string msg = where;  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on `a + b` here
      msg += ": shapes cannot be broadcast:";
      for (const Shape& x : shapes) {
        msg += ' ';
        msg += shape_str(x);
      }
      throw_bad_input(msg);
    }
  }
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  size_t off = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[off + d]) return false;
  return true;
}

BroadcastIndex::BroadcastIndex(const Shape& out, const std::vector<Shape>& inputs)
    : offsets_(inputs.size(), 0), n_(static_cast<int>(inputs.size())) {
  const int full = static_cast<int>(out.size());
  // Per full dim, each input's stride (0 where it broadcasts).
  std::vector<int64_t> full_strides(static_cast<size_t>(full) * n_, 0);
  for (int i = 0; i < n_; ++i) {
    const Shape& s = inputs[i];
    const int off = full - static_cast<int>(s.size());
    int64_t stride = 1;
    for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
      full_strides[static_cast<size_t>(off + d) * n_ + i] = s[d] == 1 ? 0 : stride;
      stride *= s[d];
    }
  }
  // Merge from the innermost dim outwards; built reversed, then flipped.
  std::vector<int64_t> dims, strides;  // strides: n_ per merged dim
  for (int d = full - 1; d >= 0; --d) {
    if (out[d] == 1) continue;
    const int64_t* st = &full_strides[static_cast<size_t>(d) * n_];
    bool merge = !dims.empty();
    for (int i = 0; merge && i < n_; ++i) {
      const int64_t inner = strides[strides.size() - n_ + i];
      merge = st[i] == inner * dims.back();
    }
    if (merge) {
      dims.back() *= out[d];
      continue;
    }
    dims.push_back(out[d]);
    strides.insert(strides.end(), st, st + n_);
  }
  rank_ = static_cast<int>(dims.size());
  out_.assign(dims.rbegin(), dims.rend());
  strides_.resize(strides.size());
  for (int d = 0; d < rank_; ++d)
    for (int i = 0; i < n_; ++i) strides_[static_cast<size_t>(d) * n_ + i] = strides[static_cast<size_t>(rank_ - 1 - d) * n_ + i];
  counter_.assign(rank_, 0);
}

}  // namespace fusor
