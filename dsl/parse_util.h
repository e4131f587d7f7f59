// Error recovery shared by the rules and provider parsers.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "dsl/source.h"

namespace fusor::dsl {

// Where to resume after a syntax error at byte `error_at` in an item that started at
// `item_start`: the first line at or after the error's line (and after the item's start) whose
// first token is one of `keywords`; text.size() when there is none.
size_t recovery_point(const std::string& text, size_t item_start, size_t error_at,
                      const std::vector<std::string_view>& keywords);

// The SourceLoc of byte `offset` of `text`.
SourceLoc position_of(const std::string& path, const std::string& text, size_t offset);

// The parser and the checks recurse once per nesting level, so nesting is bounded to keep a
// hostile file from exhausting the stack: brackets `( [ {` plus runs of prefix `!`/`-`.
inline constexpr size_t kMaxNesting = 256;
// The byte offset where nesting first exceeds kMaxNesting (comments and strings skipped), or
// std::string::npos when it never does.
size_t nesting_overflow(const std::string& text);

}  // namespace fusor::dsl
