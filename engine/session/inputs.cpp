#include "engine/session/inputs.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>

#include "core/util/error.h"
#include "core/util/memory_limit.h"
#include "core/onnx/tensor_io.h"
#include "kernels/common/half.h"

namespace fusor {

namespace {

double parse_number(const std::string& s, const std::string& what) {
  if (s.empty()) throw_usage(what + ": expected a number, got ''");
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isnan(v)) throw_usage(what + ": expected a number, got '" + s + "'");
  return v;
}

struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

template <typename T>
void fill_as(Tensor& t, const std::function<double()>& gen) {
  T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(gen());
}

void fill(Tensor& t, const std::function<double()>& gen) {
  switch (t.dtype()) {
    case DataType::Float: fill_as<float>(t, gen); break;
    case DataType::Double: fill_as<double>(t, gen); break;
    case DataType::Int64: fill_as<int64_t>(t, gen); break;
    case DataType::Int32: fill_as<int32_t>(t, gen); break;
    case DataType::Int16: fill_as<int16_t>(t, gen); break;
    case DataType::Int8: fill_as<int8_t>(t, gen); break;
    case DataType::UInt8: fill_as<uint8_t>(t, gen); break;
    case DataType::UInt16: fill_as<uint16_t>(t, gen); break;
    case DataType::UInt32: fill_as<uint32_t>(t, gen); break;
    case DataType::UInt64: fill_as<uint64_t>(t, gen); break;
    case DataType::Bool: {
      bool* p = t.data<bool>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = gen() != 0;
      break;
    }
    case DataType::Float16: {
      uint16_t* p = t.data<uint16_t>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = float_to_half(static_cast<float>(gen()));
      break;
    }
    case DataType::BFloat16: {
      uint16_t* p = t.data<uint16_t>();
      for (int64_t i = 0; i < t.numel(); ++i) p[i] = float_to_bfloat16(static_cast<float>(gen()));
      break;
    }
    case DataType::String: {
      for (auto& s : t.string_data()) s = std::to_string(static_cast<int64_t>(gen()));
      break;
    }
    default: throw_bad_input(std::string("cannot generate inputs of type ") + dtype_name(t.dtype()));
  }
}

}  // namespace

std::pair<double, double> parse_range(const std::string& text, const std::string& flag) {
  auto comma = text.find(',');
  if (comma == std::string::npos) throw_usage(flag + ": expected LO,HI, got '" + text + "'");
  double lo = parse_number(text.substr(0, comma), flag), hi = parse_number(text.substr(comma + 1), flag);
  if (lo > hi) throw_usage(flag + ": LO is greater than HI in '" + text + "'");
  return {lo, hi};
}

std::pair<std::string, double> parse_value_flag(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw_usage("--value: expected NAME=V, got '" + text + "'");
  return {text.substr(0, eq), parse_number(text.substr(eq + 1), "--value " + text.substr(0, eq))};
}

void complete_inputs(const Graph& graph, NamedTensors& given, const InputOptions& opts,
                     std::vector<std::string>* warnings) {
  auto is_input = [&](const std::string& name) {
    for (ValueId v : graph.inputs())
      if (graph.value(v).name == name) return true;
    return false;
  };
  auto input_list = [&] {
    std::string s;
    for (ValueId v : graph.inputs())
      if (!graph.value(v).constant) s += (s.empty() ? "" : ", ") + graph.value(v).name;
    return s;
  };
  for (const auto& [name, t] : given)
    if (!is_input(name)) throw_usage("--input " + name + ": the model has no input '" + name + "' (its inputs: " + input_list() + ")");
  for (const auto& [name, v] : opts.values)
    if (!is_input(name)) throw_usage("--value " + name + ": the model has no input '" + name + "' (its inputs: " + input_list() + ")");

  const auto& ins = graph.inputs();
  for (size_t k = 0; k < ins.size(); ++k) {
    const Value& v = graph.value(ins[k]);
    bool have = std::any_of(given.begin(), given.end(), [&](const auto& p) { return p.first == v.name; });
    const double* fixed = nullptr;
    for (const auto& [name, val] : opts.values)
      if (name == v.name) fixed = &val;
    if (have || (v.constant && !fixed)) continue;
    if (!v.type.is_tensor()) throw_bad_input("input '" + v.name + "' is not a tensor; fusor cannot generate it");
    if (!v.type.has_shape)
      throw_usage("input '" + v.name + "' has no declared shape: give it with --shape " + v.name + "=DIMS or --input");
    Shape shape;
    for (size_t d = 0; d < v.type.dims.size(); ++d) {
      const Dim& dim = v.type.dims[d];
      if (dim.is_known()) {
        shape.push_back(dim.value);
        continue;
      }
      shape.push_back(1);
      if (warnings)
        warnings->push_back("input '" + v.name + "': dimension " + std::to_string(d) +
                            (dim.param.empty() ? "" : " ('" + dim.param + "')") +
                            " is not set; using 1 (set it with --dim or --shape)");
    }
    DataType dt = v.type.elem == DataType::Undefined ? DataType::Float : v.type.elem;
    // Known from the shape: refuse before allocating (a declared float[2147483648] is 8 GiB).
    const std::string what = "input '" + v.name + "' (" + dtype_name(dt) + "[" + shape_str(shape) + "])";
    std::optional<size_t> bytes = checked_nbytes(shape, dt == DataType::String ? sizeof(std::string) : dtype_size(dt));
    if (!bytes) throw_bad_input(what + " has more bytes than a 64-bit count can hold");
    check_memory(*bytes, what);
    Tensor t(dt, shape);
    SplitMix rng{opts.seed * 0x100000001b3ULL + k + 1};
    std::function<double()> gen;
    if (fixed) {
      double c = *fixed;
      gen = [c] { return c; };
    } else if (dtype_is_float(dt) || dt == DataType::Float16 || dt == DataType::BFloat16) {
      gen = [&rng, lo = opts.lo, hi = opts.hi] { return lo + (hi - lo) * rng.unit(); };
    } else if (dt == DataType::Bool) {
      gen = [&rng] { return static_cast<double>(rng.next() >> 63); };
    } else {
      gen = [&rng, lo = opts.int_lo, hi = opts.int_hi] {
        uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
        return static_cast<double>(lo + static_cast<int64_t>(span ? rng.next() % span : rng.next()));
      };
    }
    fill(t, gen);
    given.emplace_back(v.name, std::move(t));
  }
}

std::pair<std::string, Tensor> read_named_input(const std::string& spec) {
  auto eq = spec.find('=');
  std::string name, path = spec;
  if (eq != std::string::npos && eq > 0) {
    name = spec.substr(0, eq);
    path = spec.substr(eq + 1);
  }
  if (path.empty()) throw_usage("--input: expected NAME=FILE, got '" + spec + "'");
  std::string stored;
  Tensor t = read_tensor_file(path, &stored);
  if (name.empty()) name = stored;
  if (name.empty()) throw_usage("--input " + path + ": the file names no input; write NAME=" + path);
  return {name, std::move(t)};
}

}  // namespace fusor
