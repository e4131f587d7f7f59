// "Did you mean ...?" for misspelt names.
#pragma once
#include <string>
#include <vector>

namespace fusor::dsl {

// Case-insensitive edit distance counting a swap of two adjacent letters as one edit (optimal
// string alignment).
size_t edit_distance(const std::string& a, const std::string& b);
// The candidate nearest to `name` (case-insensitive edit distance at most a third of the
// name's length, at least 1), or "" when none is close.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);
// " ; did you mean 'X'?" or "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace fusor::dsl
