#include "dsl/diagnostics.h"

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
bool source_line(const std::string& text, uint32_t line, std::string& out) {
  size_t pos = 0;
  for (uint32_t l = 1; l < line; ++l) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) return false;
    pos = nl + 1;
  }
  if (pos > text.size()) return false;
  size_t end = text.find('\n', pos);
  if (end == std::string::npos) end = text.size();
  out = text.substr(pos, end - pos);
  if (!out.empty() && out.back() == '\r') out.pop_back();
  return true;
}

}  // namespace

void Diagnostics::add_source(const std::string& file, std::string text) { sources_[file] = std::move(text); }

const std::string* Diagnostics::source(const std::string& file) const {
  auto it = sources_.find(file);
  return it == sources_.end() ? nullptr : &it->second;
}

void Diagnostics::error(const SourceLoc& loc, std::string message) {
  diags_.push_back({Severity::Error, loc, std::move(message)});
  ++errors_;
}

void Diagnostics::warning(const SourceLoc& loc, std::string message) {
  diags_.push_back({Severity::Warning, loc, std::move(message)});
}

void Diagnostics::note(const SourceLoc& loc, std::string message) {
  diags_.push_back({Severity::Note, loc, std::move(message)});
}

std::string Diagnostics::format(const Diagnostic& d) const {
  std::string out = d.loc.str();
  if (!out.empty()) out += ": ";
  out += severity_name(d.severity);
  out += ": ";
  out += d.message;
  out += '\n';
  const std::string* text = d.loc.has_position() ? source(d.loc.file) : nullptr;
  std::string line;
  if (text && source_line(*text, d.loc.line, line)) {
    out += line;
    out += '\n';
    // Keep tabs so the caret lines up however the terminal expands them.
    std::string caret;
    for (size_t i = 0; i + 1 < d.loc.col && i < line.size(); ++i) caret += line[i] == '\t' ? '\t' : ' ';
    while (caret.size() + 1 < d.loc.col) caret += ' ';
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

}  // namespace fusor::dsl
