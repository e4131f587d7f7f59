// The pieces of the fusor._fusor extension module, one per file (module.cpp calls them in order).
//   errors.cpp   exception classes (Fail, InvalidArgument, NoSuchFile, InvalidGraph) and the
//                translation of fusor::Exception into them
//   options.cpp  SessionOptions and GraphOptimizationLevel, in ONNX Runtime's names
//   arrays.cpp   numpy arrays <-> fusor::HostTensor without copies where the layout allows
//   session.cpp  the session (_Session) the Python InferenceSession wraps, NodeArg, ModelMetadata
//   rules.cpp    the `rules` submodule: check and test rule files
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>  // in every file: pybind11 needs the same casters in all translation units

#include <string>

#include "fusor/error.h"

namespace fusor::py {

namespace pyb = pybind11;

void bind_errors(pyb::module_& m);
void bind_options(pyb::module_& m);
void bind_session(pyb::module_& m);
void bind_rules(pyb::module_& m);

// Raises the Python exception class for `code` (errors.cpp) with `message`.
[[noreturn]] void raise(ErrorCode code, const std::string& message);

}  // namespace fusor::py
