#include "cli/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fusor::cli {

json::Value shape_json(const IoStats& io) {
  if (!io.has_shape) return json::Value();
  json::Value dims = json::Value::array();
  for (const Dim& d : io.dims) {
    if (d.is_known()) dims.push_back(d.value);
    else if (!d.param.empty()) dims.push_back(d.param);
    else dims.push_back(json::Value());
  }
  return dims;
}

json::Value io_json(const IoStats& io) {
  json::Value v = json::Value::object();
  v.set("name", io.name);
  v.set("type", io.type);
  v.set("shape", shape_json(io));
  return v;
}

json::Value opsets_json(const std::vector<OpsetImport>& opsets) {
  json::Value v = json::Value::object();
  for (const OpsetImport& o : opsets) v.set(o.domain.empty() ? "ai.onnx" : o.domain, o.version);
  return v;
}

std::string shape_text(const IoStats& io) {
  if (!io.has_shape) return "[?]";
  std::string s = "[";
  for (size_t i = 0; i < io.dims.size(); ++i) {
    if (i) s += ",";
    const Dim& d = io.dims[i];
    s += d.is_known() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param);
  }
  return s + "]";
}

std::string ms_text(double ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, ms < 10 ? "%.2f ms" : "%.1f ms", ms);
  return buf;
}

double round_ms(double ms) { return std::round(ms * 1000.0) / 1000.0; }

namespace {
std::string pad_right(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}
std::string pad_left(const std::string& s, size_t w) {
  return s.size() < w ? std::string(w - s.size(), ' ') + s : s;
}
}  // namespace

void print_histogram(std::ostream& out, const std::map<std::string, int64_t>& ops, const std::string& indent) {
  std::vector<std::pair<std::string, int64_t>> rows(ops.begin(), ops.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  size_t w = 0;
  for (const auto& r : rows) w = std::max(w, r.first.size());
  for (const auto& [op, n] : rows) out << indent << pad_right(op, w + 2) << pad_left(std::to_string(n), 6) << "\n";
}

void print_histogram_diff(std::ostream& out, const std::map<std::string, int64_t>& before,
                          const std::map<std::string, int64_t>& after) {
  std::map<std::string, std::pair<int64_t, int64_t>> all;
  for (const auto& [op, n] : before) all[op].first = n;
  for (const auto& [op, n] : after) all[op].second = n;
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> rows(all.begin(), all.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return std::max(a.second.first, a.second.second) > std::max(b.second.first, b.second.second);
  });
  size_t w = 2;
  for (const auto& r : rows) w = std::max(w, r.first.size());
  out << "  " << pad_right("op", w + 2) << pad_left("before", 8) << pad_left("after", 8) << "\n";
  for (const auto& [op, c] : rows) {
    out << "  " << pad_right(op, w + 2) << pad_left(std::to_string(c.first), 8) << pad_left(std::to_string(c.second), 8);
    if (c.first != c.second) out << "  (" << (c.second > c.first ? "+" : "") << (c.second - c.first) << ")";
    out << "\n";
  }
}

}  // namespace fusor::cli
