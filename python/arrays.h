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
// Raises InvalidArgument for a dtype the API does not carry (strings, objects, complex). When
// `expected` (the model's input) is given and the element type differs, `*hint` says what the
// value was ("got float64 (a Python list of floats becomes float64); the model expects float32:
// ..."): the session's own message (the CLI's) gets it appended.
HostTensor input_tensor(const std::string& name, const pybind11::handle& value, pybind11::array& keep,
                        const TensorInfo* expected = nullptr, std::string* hint = nullptr);
// The tensor as a numpy array sharing its memory (raises Fail for bfloat16 and other types
// numpy has no dtype for).
pybind11::array output_array(HostTensor&& t);

}  // namespace fusor::py
