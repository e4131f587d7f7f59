// ONNX multidirectional (numpy-style) broadcasting.
//
//   Shape out = broadcast_shapes({a.shape(), b.shape()}, where);   // throws BadInput if incompatible
//   BroadcastIndex it(out, {a.shape(), b.shape()});
//   for (int64_t o = 0; o < n; ++o, it.next()) y[o] = f(pa[it.offset(0)], pb[it.offset(1)]);
//
// BroadcastIndex walks the output in row-major order and keeps, for every input, the flat offset
// of the element that broadcasts to the current output element (O(1) amortized per step).
// Unidirectional broadcasting (Expand, PRelu's slope) is the same walk with one input.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/ir/tensor.h"

namespace fusor {

Shape broadcast_shapes(const std::vector<Shape>& shapes, const std::string& where);
// Whether `from` broadcasts to exactly `to` (unidirectional).
bool broadcasts_to(const Shape& from, const Shape& to);

class BroadcastIndex {
 public:
  BroadcastIndex(const Shape& out, const std::vector<Shape>& inputs);
  int64_t offset(int i) const { return offsets_[i]; }
  // Advances to the next output element (row-major).
  void next();

 private:
  Shape out_;
  std::vector<int64_t> counter_;
  // strides_[i * rank + d]: input i's element stride along output dim d (0 where broadcast).
  std::vector<int64_t> strides_;
  std::vector<int64_t> offsets_;
  int rank_ = 0;
  int n_ = 0;
};

}  // namespace fusor
