// fusor's error model: every failure the user can cause is a fusor::Error carrying an exit code.
//   Usage    (exit 1): a bad flag or flag value.
//   BadInput (exit 2): a malformed model, rule file, tensor file or provider definition.
//   Internal (exit 3): a bug in fusor.
//   Cancelled (exit 5): a run stopped by its host (a terminate flag, a --timeout).
// Messages name the place: "FILE: node 'conv1' (Conv): ..." or "FILE:LINE:COL: error: ...".
// An error found by checking a rule file or provider definition carries the diagnostics behind
// it as details (each "FILE:LINE:COL: error: message", the source line and a caret): the CLI
// prints them before the one-line message; the library API and Python put both in the
// exception's text (full_text()), since a host or a notebook sees no stderr.
#pragma once
#include <stdexcept>
#include <string>
#include <utility>

namespace fusor {

enum class ErrorKind { Usage = 1, BadInput = 2, Internal = 3, Cancelled = 5 };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, std::string details = {})
      : std::runtime_error(message), kind_(kind), details_(std::move(details)) {}
  ErrorKind kind() const { return kind_; }
  int exit_code() const { return static_cast<int>(kind_); }
  // The diagnostics behind the message, "" when none (ends with a newline otherwise).
  const std::string& details() const { return details_; }
  // The message, then the details: "rules: 1 error(s) in rule files:\nFILE:LINE:COL: error: ...".
  std::string full_text() const {
    if (details_.empty()) return what();
    std::string s = what();
    s.append(":\n").append(details_);
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }

 private:
  ErrorKind kind_;
  std::string details_;
};

[[noreturn]] inline void throw_bad_input(const std::string& msg) { throw Error(ErrorKind::BadInput, msg); }
[[noreturn]] inline void throw_usage(const std::string& msg) { throw Error(ErrorKind::Usage, msg); }
[[noreturn]] inline void throw_internal(const std::string& msg) { throw Error(ErrorKind::Internal, msg); }

}  // namespace fusor
