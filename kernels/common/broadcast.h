// ONNX multidirectional (numpy-style) broadcasting.
//
//   Shape out = broadcast_shapes({a.shape(), b.shape()}, where);   // throws BadInput if incompatible
//   BroadcastIndex it(out, {a.shape(), b.shape()});
//   for (int64_t o = 0; o < n; ++o, it.next()) y[o] = f(pa[it.offset(0)], pb[it.offset(1)]);
//
// or, faster, row by row (see row_length / row_stride / next_row).
//
// BroadcastIndex walks the output in row-major order and keeps, for every input, the flat offset
// of the element that broadcasts to the current output element (O(1) amortized per step).
// Unidirectional broadcasting (Expand, PRelu's slope) is the same walk with one input.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/tensor.h"

namespace fusor {

Shape broadcast_shapes(const std::vector<Shape>& shapes, const std::string& where);
// Whether `from` broadcasts to exactly `to` (unidirectional).
bool broadcasts_to(const Shape& from, const Shape& to);

class BroadcastIndex {
 public:
  BroadcastIndex(const Shape& out, const std::vector<Shape>& inputs);
  int64_t offset(int i) const { return offsets_[i]; }
  // Advances to the next output element (row-major).
  void next() {
    for (int d = rank_ - 1; d >= 0; --d) {
      const int64_t* st = &strides_[static_cast<size_t>(d) * n_];
      if (++counter_[d] < out_[d]) {
        for (int i = 0; i < n_; ++i) offsets_[i] += st[i];
        return;
      }
      // Wrap this dim: rewind the offsets it added.
      for (int i = 0; i < n_; ++i) offsets_[i] -= st[i] * (out_[d] - 1);
      counter_[d] = 0;
    }
  }

  // Row-wise walking, for tight inner loops: the output is a sequence of rows of row_length()
  // elements; within a row, input i advances by row_stride(i) (0 or its contiguous stride).
  // offset(i) is the row's start while walking with next_row() (do not mix with next()).
  int64_t row_length() const { return rank_ ? out_[rank_ - 1] : 1; }
  int64_t row_stride(int i) const { return rank_ ? strides_[static_cast<size_t>(rank_ - 1) * n_ + i] : 0; }
  // Positions the row walk at row `row` (0-based, row-major over the output's rows), so rows can
  // be split between threads, each with its own copy of the index.
  void seek_row(int64_t row) {
    for (int i = 0; i < n_; ++i) offsets_[i] = 0;
    for (int d = rank_ - 2; d >= 0; --d) {
      counter_[d] = row % out_[d];
      row /= out_[d];
      const int64_t* st = &strides_[static_cast<size_t>(d) * n_];
      for (int i = 0; i < n_; ++i) offsets_[i] += counter_[d] * st[i];
    }
  }
  // Rows come in runs of outer_length() consecutive rows (the next merged dim out), along which
  // input i's row start advances by outer_stride(i) (0 where it broadcasts); 1 and 0 when the
  // output has a single merged dim. Row r is at position r % outer_length() in its run.
  int64_t outer_length() const { return rank_ >= 2 ? out_[rank_ - 2] : 1; }
  int64_t outer_stride(int i) const { return rank_ >= 2 ? strides_[static_cast<size_t>(rank_ - 2) * n_ + i] : 0; }
  int64_t num_rows() const {
    int64_t r = 1;
    for (int d = 0; d + 1 < rank_; ++d) r *= out_[d];
    return r;
  }
  void next_row() {
    for (int d = rank_ - 2; d >= 0; --d) {
      const int64_t* st = &strides_[static_cast<size_t>(d) * n_];
      if (++counter_[d] < out_[d]) {
        for (int i = 0; i < n_; ++i) offsets_[i] += st[i];
        return;
      }
      for (int i = 0; i < n_; ++i) offsets_[i] -= st[i] * (out_[d] - 1);
      counter_[d] = 0;
    }
  }

 private:
  // Dims of size 1 are dropped and adjacent dims that every input walks the same way (both
  // broadcast, or both contiguous) are merged, so rows are as long as possible.
  Shape out_;
  std::vector<int64_t> counter_;
  // strides_[d * n + i]: input i's element stride along (merged) output dim d (0 where broadcast).
  std::vector<int64_t> strides_;
  std::vector<int64_t> offsets_;
  int rank_ = 0;
  int n_ = 0;
};

}  // namespace fusor
