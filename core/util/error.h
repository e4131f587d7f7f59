// fusor's error model: every failure the user can cause is a fusor::Error carrying an exit code.
//   Usage    (exit 1): a bad flag or flag value.
//   BadInput (exit 2): a malformed model, rule file, tensor file or provider definition.
//   Internal (exit 3): a bug in fusor.
//   Cancelled (exit 5): a run stopped by its host (a terminate flag, a --timeout).
// Messages name the place: "FILE: node 'conv1' (Conv): ..." or "FILE:LINE:COL: error: ...".
#pragma once
#include <stdexcept>
#include <string>

namespace fusor {

enum class ErrorKind { Usage = 1, BadInput = 2, Internal = 3, Cancelled = 5 };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }
  int exit_code() const { return static_cast<int>(kind_); }

 private:
  ErrorKind kind_;
};

[[noreturn]] inline void throw_bad_input(const std::string& msg) { throw Error(ErrorKind::BadInput, msg); }
[[noreturn]] inline void throw_usage(const std::string& msg) { throw Error(ErrorKind::Usage, msg); }
[[noreturn]] inline void throw_internal(const std::string& msg) { throw Error(ErrorKind::Internal, msg); }

}  // namespace fusor
