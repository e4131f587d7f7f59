// Python exception classes named as ONNX Runtime's (onnxruntime.capi.onnxruntime_pybind11_state:
// Fail, InvalidArgument, NoSuchFile, InvalidGraph), all under one base, FusorError, and
// Cancelled (a Fail: a run stopped by RunOptions). Like ORT's
// they derive from Exception. A fusor::Exception becomes the class of its code with the message
// the CLI prints; internal fusor::Error (from rules.cpp, which calls engine code directly) maps
// as the library API maps it (api_error_code).
#include <pybind11/pybind11.h>

#include "core/util/error.h"
#include "engine/session/api_error.h"  // api_error_code: the library's mapping of internal errors
#include "fusor/error.h"
#include "python/bindings.h"

namespace fusor::py {

namespace {

// Created once per process and never released: the translator may run late in finalization.
PyObject* g_base = nullptr;
constexpr int kCodes = 5;
PyObject* g_classes[kCodes] = {};  // indexed by ErrorCode

PyObject* class_for(ErrorCode code) {
  int i = static_cast<int>(code);
  return i >= 0 && i < kCodes ? g_classes[i] : g_classes[static_cast<int>(ErrorCode::Fail)];
}

}  // namespace

void raise(ErrorCode code, const std::string& message) { throw Exception(code, message); }

void bind_errors(pyb::module_& m) {
  g_base = PyErr_NewExceptionWithDoc("fusor.FusorError", "Base of every error fusor raises.", PyExc_Exception, nullptr);
  struct Spec { ErrorCode code; const char* doc; };
  const Spec specs[] = {
      {ErrorCode::InvalidArgument, "Bad options, unknown provider or level, wrong input name, type or shape."},
      {ErrorCode::NoSuchFile, "The model file does not exist."},
      {ErrorCode::InvalidGraph, "A malformed model, a bad rule file, an op without a kernel, a model "
                                "optimized for another provider."},
      {ErrorCode::Fail, "Anything else, including a bug in fusor."},
  };
  for (const Spec& s : specs) {
    std::string qualified = std::string("fusor.") + error_code_name(s.code);
    g_classes[static_cast<int>(s.code)] = PyErr_NewExceptionWithDoc(qualified.c_str(), s.doc, g_base, nullptr);
  }
  // A cancelled run: a Fail, as ONNX Runtime reports a run stopped by RunOptions.terminate.
  g_classes[static_cast<int>(ErrorCode::Cancelled)] =
      PyErr_NewExceptionWithDoc("fusor.Cancelled", "A run stopped by RunOptions (terminate, timeout_ms).",
                                class_for(ErrorCode::Fail), nullptr);
  m.add_object("FusorError", pyb::handle(g_base).inc_ref());
  for (const Spec& s : specs) m.add_object(error_code_name(s.code), pyb::handle(class_for(s.code)).inc_ref());
  m.add_object("Cancelled", pyb::handle(class_for(ErrorCode::Cancelled)).inc_ref());

  pyb::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Exception& e) {
      PyErr_SetString(class_for(e.code()), e.what());
    } catch (const Error& e) {
      PyErr_SetString(class_for(api_error_code(e)), e.full_text().c_str());
    }
  });
}

}  // namespace fusor::py
