// Source positions for the rule language. Every AST node and every diagnostic carries one.
#pragma once
#include <cstdint>
#include <string>

namespace fusor::dsl {

// A point in a source file. `file` is the path as the user (or the importing file) named it,
// so messages stay relative when the input was relative. line/col are 1-based; 0 means "the
// whole file" (a file that could not be opened, say).
struct SourceLoc {
  std::string file;
  uint32_t line = 0;
  uint32_t col = 0;

  bool has_position() const { return line != 0; }
  // "FILE:LINE:COL", or "FILE" without a position.
  std::string str() const {
    if (!has_position()) return file;
    return file + ":" + std::to_string(line) + ":" + std::to_string(col);
  }
};

}  // namespace fusor::dsl
