// Axis arithmetic shared by kernels: negative-axis normalization with range checks, strides.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/tensor.h"

namespace fusor {

// Maps axis in [-rank, rank) to [0, rank); throws BadInput "<where>: axis A out of range for rank R".
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& where);
// Normalizes each axis; result sorted ascending. Duplicates throw BadInput.
std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank, const std::string& where);
// Row-major element strides of a shape (last dim stride 1).
std::vector<int64_t> row_major_strides(const Shape& s);
// Product of dims [begin, end).
int64_t dims_product(const Shape& s, int64_t begin, int64_t end);

}  // namespace fusor
