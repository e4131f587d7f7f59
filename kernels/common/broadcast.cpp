#include "kernels/common/broadcast.h"

#include <algorithm>

#include "engine/ir/error.h"

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
      std::string msg = where + ": shapes cannot be broadcast:";
      for (const Shape& x : shapes) msg += " " + shape_str(x);
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
    : out_(out), counter_(out.size(), 0), offsets_(inputs.size(), 0),
      rank_(static_cast<int>(out.size())), n_(static_cast<int>(inputs.size())) {
  strides_.assign(static_cast<size_t>(rank_) * n_, 0);
  for (int i = 0; i < n_; ++i) {
    const Shape& s = inputs[i];
    int off = rank_ - static_cast<int>(s.size());
    int64_t stride = 1;
    for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
      strides_[static_cast<size_t>(i) * rank_ + off + d] = s[d] == 1 ? 0 : stride;
      stride *= s[d];
    }
  }
}

void BroadcastIndex::next() {
  for (int d = rank_ - 1; d >= 0; --d) {
    if (++counter_[d] < out_[d]) {
      for (int i = 0; i < n_; ++i) offsets_[i] += strides_[static_cast<size_t>(i) * rank_ + d];
      return;
    }
    // Wrap this dim: rewind the offsets it added.
    for (int i = 0; i < n_; ++i) offsets_[i] -= strides_[static_cast<size_t>(i) * rank_ + d] * (out_[d] - 1);
    counter_[d] = 0;
  }
}

}  // namespace fusor
