#include "engine/ruletest/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/session/inputs.h"

namespace fusor::ruletest {

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

}  // namespace

Difference compare_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& before,
                           const std::vector<Tensor>& after) {
  Difference d;
  const double inf = std::numeric_limits<double>::infinity();
  if (before.size() != after.size()) {
    d.error = d.max_abs = inf;
    d.problem = std::to_string(before.size()) + " output(s) before, " + std::to_string(after.size()) + " after";
    return d;
  }
  for (size_t o = 0; o < before.size(); ++o) {
    const Tensor& b = before[o];
    const Tensor& a = after[o];
    std::string name = "output '" + (o < names.size() ? names[o] : std::to_string(o)) + "'";
    if (b.shape() != a.shape() || b.dtype() != a.dtype()) {
      d.error = d.max_abs = inf;
      d.problem = name + " is " + dtype_name(b.dtype()) + "[" + shape_str(b.shape()) + "] before, " +
                  dtype_name(a.dtype()) + "[" + shape_str(a.shape()) + "] after";
      return d;
    }
    if (b.dtype() == DataType::String) {
      if (b.string_data() != a.string_data()) {
        d.error = d.max_abs = inf;
        d.problem = name + ": the strings differ";
        return d;
      }
      continue;
    }
    for (int64_t i = 0; i < b.numel(); ++i) {
      double x = b.as_double(i), y = a.as_double(i);
      double abs_diff, err;
      if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) {
        bool same = (std::isnan(x) && std::isnan(y)) || x == y;
        abs_diff = err = same ? 0 : inf;
      } else {
        abs_diff = std::fabs(y - x);
        err = abs_diff / std::max(1.0, std::fabs(x));
      }
      d.max_abs = std::max(d.max_abs, abs_diff);
      if (err > d.error) {
        d.error = err;
        d.worst = name + "[" + std::to_string(i) + "]: " + num(y) + " after, " + num(x) + " before";
      }
    }
  }
  return d;
}

NamedTensors random_inputs(const Graph& g, uint64_t seed, const RandomRange& range, std::vector<std::string>* warnings) {
  NamedTensors in;
  InputOptions opts;
  opts.seed = seed;
  opts.lo = range.lo;
  opts.hi = range.hi;
  opts.int_lo = range.int_lo;
  opts.int_hi = range.int_hi;
  complete_inputs(g, in, opts, warnings);
  return in;
}

std::vector<Tensor> run_model(const Model& m, const NamedTensors& inputs, int threads) {
  ExecOptions eo;
  eo.threads = threads;
  Executor ex(m, eo);
  return ex.run(inputs);
}

std::vector<std::string> output_names(const Graph& g) {
  std::vector<std::string> names;
  for (ValueId v : g.outputs()) names.push_back(g.value(v).name);
  return names;
}

}  // namespace fusor::ruletest
