// fusor's public error model: every failure is a fusor::Exception (a std::runtime_error) with a
// code. The message is the one the CLI prints ("model.onnx: node 'conv1' (Conv): ..."); exit_code()
// is the CLI's exit code for the same failure.
//
//   InvalidArgument  bad options, unknown provider or level, wrong input name / type / shape (exit 1)
//   NoSuchFile       the model file does not exist (exit 2)
//   InvalidGraph     a malformed model, a bad rule file, a model optimized for another provider,
//                    an op without a kernel (exit 2)
//   Fail             anything else, including bugs in fusor (exit 3)
//   Cancelled        a run stopped by RunOptions (terminate, timeout_ms) (exit 5)
#pragma once
#include <stdexcept>
#include <string>

namespace fusor {

enum class ErrorCode { InvalidArgument, NoSuchFile, InvalidGraph, Fail, Cancelled };

class Exception : public std::runtime_error {
 public:
  Exception(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }
  int exit_code() const {
    switch (code_) {
      case ErrorCode::InvalidArgument: return 1;
      case ErrorCode::NoSuchFile:
      case ErrorCode::InvalidGraph: return 2;
      case ErrorCode::Fail: return 3;
      case ErrorCode::Cancelled: return 5;
    }
    return 3;
  }

 private:
  ErrorCode code_;
};

// "InvalidArgument", "NoSuchFile", "InvalidGraph", "Fail", "Cancelled" (the first four are the names ONNX Runtime's Python
// exceptions use).
inline const char* error_code_name(ErrorCode c) {
  switch (c) {
    case ErrorCode::InvalidArgument: return "InvalidArgument";
    case ErrorCode::NoSuchFile: return "NoSuchFile";
    case ErrorCode::InvalidGraph: return "InvalidGraph";
    case ErrorCode::Fail: return "Fail";
    case ErrorCode::Cancelled: return "Cancelled";
  }
  return "Fail";
}

}  // namespace fusor
