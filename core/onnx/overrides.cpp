#include "core/onnx/overrides.h"

#include <cerrno>
#include <cstdlib>
#include <set>

#include "core/util/error.h"

namespace fusor {

namespace {

bool parse_int(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = std::strtoll(s.c_str(), nullptr, 10);
  return true;
}

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "(none)" : out;
}

void check_rank(const std::string& input, int have, size_t want) {
  if (have >= 0 && static_cast<size_t>(have) != want)
    throw_usage("--shape " + input + ": the model gives this input rank " + std::to_string(have) + ", not " +
                std::to_string(want));
}

}  // namespace

std::pair<std::string, int64_t> parse_dim_override(const std::string& text) {
  size_t eq = text.rfind('=');
  int64_t v = 0;
  if (eq == std::string::npos || eq == 0 || !parse_int(text.substr(eq + 1), &v))
    throw_usage("--dim expects NAME=VALUE with a non-negative integer value, got '" + text + "'");
  return {text.substr(0, eq), v};
}

std::pair<std::string, Shape> parse_shape_override(const std::string& text) {
  size_t eq = text.rfind('=');
  auto bad = [&]() { throw_usage("--shape expects INPUT=D1xD2x... (e.g. input=1x3x224x224), got '" + text + "'"); };
  if (eq == std::string::npos || eq == 0) bad();
  std::string dims = text.substr(eq + 1);
  Shape shape;
  if (dims == "scalar") return {text.substr(0, eq), shape};
  if (dims.empty()) bad();
  size_t start = 0;
  for (;;) {
    size_t end = dims.find_first_of("x,", start);
    int64_t v = 0;
    if (!parse_int(dims.substr(start, end == std::string::npos ? std::string::npos : end - start), &v)) bad();
    shape.push_back(v);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return {text.substr(0, eq), shape};
}

void apply_overrides(onnx::GraphProto& g, const ShapeOverrides& ov) {
  if (ov.empty()) return;
  std::set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  std::set<std::string> inputs, symbols;
  for (const auto& vi : g.input()) {
    if (initializers.count(vi.name())) continue;
    inputs.insert(vi.name());
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
      for (const auto& d : vi.type().tensor_type().shape().dim())
        if (d.has_dim_param()) symbols.insert(d.dim_param());
  }
  for (const auto& dim : ov.dims) {
    const std::string& name = dim.first;  // not a structured binding: the lambda below captures it (clang 14)
    const auto value = dim.second;
    if (!symbols.count(name))
      throw_usage("--dim " + name + ": no graph input has a dimension named '" + name + "' (symbolic dims: " +
                  join(symbols) + ")");
    auto rewrite = [&](onnx::ValueInfoProto& vi) {
      if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
      for (auto& d : *vi.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
        if (d.has_dim_param() && d.dim_param() == name) d.set_dim_value(value);
    };
    for (auto& vi : *g.mutable_input()) rewrite(vi);
    for (auto& vi : *g.mutable_output()) rewrite(vi);
    for (auto& vi : *g.mutable_value_info()) rewrite(vi);
  }
  for (const auto& [name, shape] : ov.shapes) {
    if (!inputs.count(name)) throw_usage("--shape " + name + ": the model has no input '" + name + "' (inputs: " + join(inputs) + ")");
    for (auto& vi : *g.mutable_input()) {
      if (vi.name() != name) continue;
      if (vi.type().value_case() != onnx::TypeProto::VALUE_NOT_SET && !vi.type().has_tensor_type())
        throw_usage("--shape " + name + ": this input is not a tensor");
      auto* tt = vi.mutable_type()->mutable_tensor_type();
      check_rank(name, tt->has_shape() ? tt->shape().dim_size() : -1, shape.size());
      auto* sh = tt->mutable_shape();
      sh->clear_dim();
      for (int64_t d : shape) sh->add_dim()->set_dim_value(d);
    }
  }
}

void apply_overrides(Graph& g, const ShapeOverrides& ov) {
  if (ov.empty()) return;
  std::set<std::string> inputs, symbols;
  for (ValueId v : g.inputs()) {
    const Value& val = g.value(v);
    if (val.is_initializer()) continue;
    inputs.insert(val.name);
    for (const Dim& d : val.type.dims)
      if (!d.is_known() && !d.param.empty()) symbols.insert(d.param);
  }
  for (const auto& dim : ov.dims) {
    const std::string& name = dim.first;  // not a structured binding: the lambda below captures it (clang 14)
    const auto value = dim.second;
    if (!symbols.count(name))
      throw_usage("--dim " + name + ": no graph input has a dimension named '" + name + "' (symbolic dims: " +
                  join(symbols) + ")");
    for (ValueId v : g.inputs())
      for (Dim& d : g.value(v).type.dims)
        if (!d.is_known() && d.param == name) d = Dim::known(value);
  }
  for (const auto& [name, shape] : ov.shapes) {
    if (!inputs.count(name)) throw_usage("--shape " + name + ": the model has no input '" + name + "' (inputs: " + join(inputs) + ")");
    for (ValueId v : g.inputs()) {
      Value& val = g.value(v);
      if (val.name != name) continue;
      if (!val.type.is_tensor()) throw_usage("--shape " + name + ": this input is not a tensor");
      check_rank(name, val.type.rank(), shape.size());
      DataType elem = val.type.elem;
      val.type = ValueType::tensor(elem, shape);
    }
  }
}

}  // namespace fusor
