// Strided element copy: dst (contiguous, row-major over dst.shape()) gets, for output multi-index
// (i0..ik), src element base + sum(i_d * src_strides[d]). Strides may be 0 (broadcast, Expand) or
// negative (reversed Slice). Handles every fixed-size element type and strings.
//
// Speed: dims of size 1 are dropped and neighbouring dims that step through the source as one
// are merged, so the copy runs as rows of the innermost merged dim, taken in runs along the next
// dim out (one odometer step per run): a copy per row when that dim is contiguous in the source
// (Slice, the head split Transpose(0,2,1,3), channel shuffle, image patches as rows; short rows
// of 16 to 128 bytes as fixed-size moves),
// a blocked transpose when the source is contiguous along the next dim out (Transpose between
// NCHW and NHWC: 16 rows at a time in 4 x 4 tiles of 4-byte elements, transpose_tile.h), a
// strided gather per row otherwise. With a pool, the rows are split over its threads when the
// copy is large enough to pay for it (thread_pool.h's cost model); the result does not depend on
// the split.
#pragma once
#include <cstdint>
#include <vector>

#include "core/ir/tensor.h"

namespace fusor {

class ThreadPool;

void strided_copy(const Tensor& src, int64_t base, const std::vector<int64_t>& src_strides, Tensor& dst,
                  ThreadPool* pool = nullptr);

}  // namespace fusor
