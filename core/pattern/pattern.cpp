#include "core/pattern/pattern.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace fusor {

bool within_literal_tolerance(double value, double literal) {
  return std::fabs(value - literal) <= kLiteralTolerance * std::max(1.0, std::fabs(literal));
}

std::string Literal::str() const {
  std::ostringstream os;
  auto one = [&](double v) {
    if (is_integer && std::floor(v) == v) os << static_cast<int64_t>(v); else os << v;
  };
  if (is_list) os << '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) os << ", ";
    one(values[i]);
  }
  if (is_list) os << ']';
  return os.str();
}

int Pattern::add_node(std::vector<OpType> ops, std::vector<PInput> inputs, std::vector<std::string> out_names,
                      std::vector<AttrConstraint> attrs) {
  int n = static_cast<int>(nodes.size());
  PatternNode pn;
  pn.ops = std::move(ops);
  pn.inputs = std::move(inputs);
  pn.attrs = std::move(attrs);
  if (out_names.empty()) out_names.push_back("");
  for (size_t i = 0; i < out_names.size(); ++i) {
    vars.push_back({out_names[i], n, static_cast<int>(i)});
    pn.outputs.push_back(static_cast<int>(vars.size()) - 1);
  }
  nodes.push_back(std::move(pn));
  return n;
}

}  // namespace fusor
