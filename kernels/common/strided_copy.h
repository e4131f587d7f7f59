// Strided element copy: dst (contiguous, row-major over dst.shape()) gets, for output multi-index
// (i0..ik), src element base + sum(i_d * src_strides[d]). Strides may be 0 (broadcast, Expand) or
// negative (reversed Slice). Handles every fixed-size element type and strings.
#pragma once
#include <cstdint>
#include <vector>

#include "core/ir/tensor.h"

namespace fusor {

void strided_copy(const Tensor& src, int64_t base, const std::vector<int64_t>& src_strides, Tensor& dst);

}  // namespace fusor
