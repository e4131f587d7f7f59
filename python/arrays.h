// numpy arrays <-> fusor::HostTensor.
//   Inputs: a C-contiguous, aligned, native-byte-order array of a supported dtype is borrowed as
//   is (the caller keeps `keep` alive until run returns); anything else (a list, a strided view,
//   a big-endian array) is converted once with numpy.ascontiguousarray, as ONNX Runtime does.
//   Outputs: the array's base object is a capsule owning the HostTensor run returned: no copy.
#pragma once
#include <pybind11/numpy.h>

#include "fusor/tensor.h"

namespace fusor::py {

// `value` as a HostTensor for input `name`; the array actually borrowed is stored in `keep`.
// Raises InvalidArgument for a dtype the API does not carry (strings, objects, complex).
HostTensor input_tensor(const std::string& name, const pybind11::handle& value, pybind11::array& keep);
// The tensor as a numpy array sharing its memory (raises Fail for bfloat16 and other types
// numpy has no dtype for).
pybind11::array output_array(HostTensor&& t);

}  // namespace fusor::py
