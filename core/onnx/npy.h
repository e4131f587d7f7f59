// NumPy .npy files (format versions 1.0 to 3.0) for numeric tensors.
#pragma once
#include <string>

#include "core/ir/tensor.h"

namespace fusor {

inline constexpr char kNpyMagic[] = "\x93NUMPY";
bool has_npy_magic(const std::string& bytes);
// Parses the bytes of an .npy file; BadInput naming `path` when they are not a supported array
// (object/unicode arrays, Fortran order with rank > 1 is transposed, big-endian is byte-swapped).
Tensor parse_npy(std::string bytes, const std::string& path);
std::string serialize_npy(const Tensor& t);

}  // namespace fusor
