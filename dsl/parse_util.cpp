#include "dsl/parse_util.h"

#include <cctype>

namespace fusor::dsl {
namespace {

bool starts_with_keyword(std::string_view s, std::string_view kw) {
  if (s.substr(0, kw.size()) != kw) return false;
  if (s.size() == kw.size()) return true;
  char c = s[kw.size()];
  return !(std::isalnum(static_cast<unsigned char>(c)) || c == '_');
}

}  // namespace

size_t recovery_point(const std::string& text, size_t item_start, size_t error_at,
                      const std::vector<std::string_view>& keywords) {
  size_t line_start = error_at == 0 ? std::string::npos : text.rfind('\n', error_at - 1);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  for (size_t pos = line_start; pos < text.size();) {
    size_t first = text.find_first_not_of(" \t\r", pos);
    if (first != std::string::npos && first > item_start) {
      std::string_view rest(text.data() + first, text.size() - first);
      for (std::string_view kw : keywords)
        if (starts_with_keyword(rest, kw)) return first;
    }
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  return text.size();
}

SourceLoc position_of(const std::string& path, const std::string& text, size_t offset) {
  uint32_t line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return SourceLoc{path, line, col};
}

size_t nesting_overflow(const std::string& text) {
  size_t depth = 0, prefix_run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '#') {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
      continue;
    }
    if (c == '"') {
      while (++i < text.size() && text[i] != '"' && text[i] != '\n')
        if (text[i] == '\\') ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    else if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (c == '!' || c == '-') ++prefix_run;
    else if (!std::isspace(static_cast<unsigned char>(c))) prefix_run = 0;
    if (depth + prefix_run > kMaxNesting) return i;
  }
  return std::string::npos;
}

}  // namespace fusor::dsl
