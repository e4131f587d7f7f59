#include "dsl/diagnostics.h"

#include <algorithm>

namespace fusor::dsl {
namespace {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

// The text of 1-based line `line`, without its end-of-line; false if the file is shorter.
bool source_line(const std::string& text, const std::vector<size_t>& starts, uint32_t line, std::string& out) {
  if (line == 0 || line > starts.size()) return false;
  size_t pos = starts[line - 1];
  size_t end = text.find('\n', pos);
  if (end == std::string::npos) end = text.size();
  out = text.substr(pos, end - pos);
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return true;
}

}  // namespace

void Diagnostics::add_source(const std::string& file, std::string text) {
  Source& s = sources_[file];
  s.text = std::move(text);
  s.line_starts = {0};
  for (size_t i = 0; i < s.text.size(); ++i)
    if (s.text[i] == '\n') s.line_starts.push_back(i + 1);
}

const std::string* Diagnostics::source(const std::string& file) const {
  auto it = sources_.find(file);
  return it == sources_.end() ? nullptr : &it->second.text;
}

void Diagnostics::error(const SourceLoc& loc, std::string message) {
  ++errors_;
  dropping_ = errors_ > kMaxShownErrors;
  if (errors_ == kMaxShownErrors + 1)
    diags_.push_back({Severity::Error, SourceLoc{loc.file},
                      "too many errors (more than " + std::to_string(kMaxShownErrors) + "); the rest are not shown"});
  if (!dropping_) diags_.push_back({Severity::Error, loc, std::move(message)});
}

void Diagnostics::warning(const SourceLoc& loc, std::string message) {
  if (!dropping_) diags_.push_back({Severity::Warning, loc, std::move(message)});
}

void Diagnostics::note(const SourceLoc& loc, std::string message) {
  if (!dropping_) diags_.push_back({Severity::Note, loc, std::move(message)});
}

namespace {
constexpr size_t kMaxShownLineChars = 160;  // longer source lines are shown as a window
}  // namespace

std::string Diagnostics::format(const Diagnostic& d) const {
  std::string out = d.loc.str();
  if (!out.empty()) out += ": ";
  out += severity_name(d.severity);
  out += ": ";
  out += d.message;
  out += '\n';
  auto src = d.loc.has_position() ? sources_.find(d.loc.file) : sources_.end();
  std::string line;
  if (src != sources_.end() && source_line(src->second.text, src->second.line_starts, d.loc.line, line)) {
    // A long line (a generated file, a fuzzer's megabyte line) is shown as a window around the
    // column, marked with "..." where it is cut; the column in FILE:LINE:COL stays the real one.
    size_t col = d.loc.col > 0 ? d.loc.col - 1 : 0;  // 0-based
    std::string prefix;
    if (line.size() > kMaxShownLineChars) {
      size_t begin = col > kMaxShownLineChars / 2 ? col - kMaxShownLineChars / 2 : 0;
      begin = std::min(begin, line.size() - std::min(line.size(), kMaxShownLineChars));
      bool cut_left = begin > 0, cut_right = begin + kMaxShownLineChars < line.size();
      line = line.substr(begin, kMaxShownLineChars);
      if (cut_left) prefix = "...";
      if (cut_right) line += "...";
      col -= std::min(col, begin);
    }
    out += prefix + line;
    out += '\n';
    // Keep tabs so the caret lines up however the terminal expands them.
    std::string caret(prefix.size(), ' ');
    for (size_t i = 0; i < col && i < line.size(); ++i) caret += line[i] == '\t' ? '\t' : ' ';
    while (caret.size() < prefix.size() + col) caret += ' ';
    out += caret;
    out += "^\n";
  }
  return out;
}

std::string Diagnostics::str() const {
  std::string out;
  for (const auto& d : diags_) out += format(d);
  return out;
}

std::string Diagnostics::error_text(const std::string& prefix, const std::string& what) const {
  std::string d = str();
  while (!d.empty() && d.back() == '\n') d.pop_back();
  return prefix + std::to_string(errors_) + " error(s) in " + what + ":\n" + d;
}

}  // namespace fusor::dsl
