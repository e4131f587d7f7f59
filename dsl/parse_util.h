// Error recovery shared by the rules and provider parsers.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace fusor::dsl {

// Where to resume after a syntax error at byte `error_at` in an item that started at
// `item_start`: the first line at or after the error's line (and after the item's start) whose
// first token is one of `keywords`; text.size() when there is none.
size_t recovery_point(const std::string& text, size_t item_start, size_t error_at,
                      const std::vector<std::string_view>& keywords);

}  // namespace fusor::dsl
