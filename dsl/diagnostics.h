// Diagnostics for rule and provider files, printed as compilers print them:
//
//   rules/x.rules:12:9: error: unknown op 'Conv2' at opset 17; did you mean 'Conv'?
//       c = Conv2(x, w)
//           ^
//
// The parser and the checks report here instead of throwing, so one run reports every error it
// can recover from. A Diagnostics object also keeps the text of each file it has seen, to print
// the source line under each message.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "dsl/source.h"

namespace fusor::dsl {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
};

class Diagnostics {
 public:
  // Registers a file's text under the name its SourceLocs use.
  void add_source(const std::string& file, std::string text);
  const std::string* source(const std::string& file) const;

  void error(const SourceLoc& loc, std::string message);
  void warning(const SourceLoc& loc, std::string message);
  // A note attaches to the diagnostic before it ("previous definition is here").
  void note(const SourceLoc& loc, std::string message);

  // At most this many errors are kept (and printed); later ones are counted, and one final
  // error says the rest were dropped. Keeps a garbage file from flooding the terminal.
  static constexpr size_t kMaxShownErrors = 100;

  bool has_errors() const { return errors_ > 0; }
  size_t error_count() const { return errors_; }
  const std::vector<Diagnostic>& all() const { return diags_; }
  bool empty() const { return diags_.empty(); }

  // One diagnostic: the message line, then (when the position is known and the file's text was
  // registered) the source line and a caret line.
  std::string format(const Diagnostic& d) const;
  // Every diagnostic in report order, each formatted as above.
  std::string str() const;
  // The text of an error that carries the diagnostics, for callers that throw rather than print
  // (a host app or a notebook sees no stderr): "PREFIXN error(s) in WHAT:\n" then str() without
  // its final newline.
  std::string error_text(const std::string& prefix, const std::string& what) const;

 private:
  struct Source {
    std::string text;
    std::vector<size_t> line_starts;  // byte offset of each line
  };
  std::vector<Diagnostic> diags_;
  std::map<std::string, Source> sources_;
  size_t errors_ = 0;
  bool dropping_ = false;  // past kMaxShownErrors: notes of dropped errors are dropped too
};

}  // namespace fusor::dsl
