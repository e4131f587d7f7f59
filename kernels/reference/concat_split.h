// The element moves Concat and Split make, shared with the sequence ops (ConcatFromSequence,
// SplitToSequence): any element type, strings included. Callers check axes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/tensor.h"

namespace fusor {

class ThreadPool;

// The shape of `ins` concatenated along `axis` (non-negative, < rank). Throws BadInput naming
// `where` when the inputs differ in rank, element type or a dim other than the axis.
Shape concat_shape(const std::vector<const Tensor*>& ins, int64_t axis, const std::string& where);
// Writes the concatenation into y, whose shape is concat_shape(ins, axis). With a pool, the copies
// (any element type but strings) are split over its threads in pieces of equal bytes when that
// pays (ThreadPool's cost model: DenseNet copies ~40 MB through its Concats per image).
void concat_into(const std::vector<const Tensor*>& ins, int64_t axis, Tensor& y, ThreadPool* pool = nullptr);
// Copies x's elements [pos, pos + y.dim(axis)) along `axis` into y (x's shape but that dim).
void slice_axis_into(const Tensor& x, int64_t axis, int64_t pos, Tensor& y);

}  // namespace fusor
