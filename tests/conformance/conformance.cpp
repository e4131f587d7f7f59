// ONNX backend node-test conformance runner.
//
// For every test directory (model.onnx + test_data_set_*/input_*.pb, output_*.pb) under the data
// directory: load the model, plan it, run every data set and compare each output at
// |got - expected| <= atol + rtol * |expected| (NaN == NaN, infinities must match exactly).
// Every test lands in exactly one bucket:
//   passed       every data set matched;
//   unsupported  a node (subgraphs included) has no kernel at the model's opset, or a graph input
//                or output has a type fusor does not run (maps, sparse tensors; sequences and
//                optionals of tensors run, their data read from SequenceProto/OptionalProto files);
//   invalid      the test's own input data contradicts the model's declared input type (dtype,
//                rank or a static dim), which a conforming runtime must reject; listed by name;
//   random       the model draws random numbers (RandomUniform/Normal(Like), Bernoulli,
//                Multinomial), whose values no two runtimes share (ONNX's tests say so even for a
//                fixed seed): every output must have the expected type and shape, lie within the
//                expected output's [min, max], and be whole numbers where the expected ones all are
//                (Bernoulli's 0/1); counted and printed apart from `passed`;
//   divergent    a test in known_divergent.h (expected data no runtime can reproduce) that did not
//                pass; printed with its reason on every run;
//   failed       anything else: a load error, a run-time error, a crash, a timeout, a mismatch.
// Each test runs in a forked child so that a crashing kernel fails only its own test.
// Exit status: 1 when any test failed or fewer than --min-passed tests passed, 0 otherwise.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/exec/executor.h"
#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "core/onnx/tensor_io.h"
#include "kernels/common/half.h"
#include "kernels/kernel.h"
#include "tests/conformance/known_divergent.h"

namespace fs = std::filesystem;
using namespace fusor;

namespace {

struct Options {
  std::string dir = "/usr/share/libonnx-testdata/data/node";
  std::vector<std::string> filters;
  double rtol = 1e-3, atol = 1e-5;
  std::string impl;
  bool fork_each = true;
  bool verbose = false;
  int timeout_s = 120;
  int threads = 1;
  int min_passed = 0;
};

// Ops without a kernel at the model's opset, from the graph and its subgraphs. Constant nodes the
// planner folds need no kernel.
void missing_ops(const Graph& g, const Model& m, const std::string& impl, std::set<std::string>& out) {
  for (NodeId id : g.order()) {
    const Node& n = g.node(id);
    bool foldable_constant = n.op == OpType::onnx("Constant") && n.attrs.size() == 1 &&
                             n.attrs[0].kind != AttrKind::Opaque && n.attrs[0].name != "sparse_value";
    if (!foldable_constant && !KernelRegistry::global().find(n.op, m.opset(n.op.domain()), impl))
      out.insert(n.op.qualified());
    for (Graph* sg : g.subgraphs(id)) missing_ops(*sg, m, impl, out);
  }
}

// Whether g (or a subgraph) has an op that draws random numbers.
bool draws_random(const Graph& g) {
  static const std::set<std::string> kRandom = {"RandomUniform", "RandomUniformLike", "RandomNormal",
                                                "RandomNormalLike", "Bernoulli", "Multinomial"};
  for (NodeId id : g.order()) {
    const Node& n = g.node(id);
    if (n.op.domain().empty() && kRandom.count(std::string(n.op.name()))) return true;
    for (Graph* sg : g.subgraphs(id))
      if (draws_random(*sg)) return true;
  }
  return false;
}

bool opaque_io(const Graph& g) {
  for (ValueId v : g.inputs())
    if (g.value(v).type.kind == TypeKind::Opaque) return true;
  for (ValueId v : g.outputs())
    if (g.value(v).type.kind == TypeKind::Opaque) return true;
  return false;
}

double element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::Float16: return half_to_float(t.data<uint16_t>()[i]);
    case DataType::BFloat16: return bfloat16_to_float(t.data<uint16_t>()[i]);
    default: return t.as_double(i);
  }
}

// "" when equal within tolerance, else what differs.
std::string compare(const Tensor& got, const Tensor& want_in, const Options& o) {
  // The ONNX test data stores bfloat16 tensors as uint16 bit patterns.
  Tensor want = want_in;
  if (want.dtype() == DataType::UInt16 && got.dtype() == DataType::BFloat16)
    want = Tensor(DataType::BFloat16, want.shape(), want.buffer(), want.offset());
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " + dtype_name(want.dtype());
  if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + ", expected " + shape_str(want.shape());
  if (want.dtype() == DataType::String) return got.string_data() == want.string_data() ? "" : "string elements differ";
  bool is_float = dtype_is_float(want.dtype()) || want.dtype() == DataType::Float16 || want.dtype() == DataType::BFloat16;
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    bool ok;
    if (is_float) {
      double g = element(got, i), w = element(want, i);
      if (std::isnan(w) || std::isnan(g)) ok = std::isnan(w) && std::isnan(g);
      else if (std::isinf(w) || std::isinf(g)) ok = g == w;
      else {
        double err = std::fabs(g - w);
        ok = err <= o.atol + o.rtol * std::fabs(w);
        if (!ok) worst = std::max(worst, err);
      }
    } else if (want.dtype() == DataType::UInt64) {
      ok = got.data<uint64_t>()[i] == want.data<uint64_t>()[i];
    } else {
      ok = got.as_int64(i) == want.as_int64(i);
    }
    if (!ok) {
      if (first < 0) first = i;
      ++bad;
    }
  }
  if (!bad) return "";
  std::ostringstream os;
  os << bad << " of " << want.numel() << " elements differ; first at " << first << ": got " << element(got, first)
     << ", expected " << element(want, first);
  if (is_float) os << " (max abs err " << worst << ")";
  return os.str();
}

// compare() for any run-time value: sequences item by item, none only equal to none.
std::string compare_value(const Tensor& got, const Tensor& want, const Options& o) {
  if (want.is_none() || got.is_none())
    return want.is_none() && got.is_none() ? "" : "got " + got.describe() + ", expected " + want.describe();
  if (want.is_sequence() != got.is_sequence()) return "got " + got.describe() + ", expected " + want.describe();
  if (!want.is_sequence()) return compare(got, want, o);
  if (got.items().size() != want.items().size()) return "got " + got.describe() + ", expected " + want.describe();
  for (size_t i = 0; i < want.items().size(); ++i) {
    std::string d = compare(got.items()[i], want.items()[i], o);
    if (!d.empty()) return "sequence item " + std::to_string(i) + ": " + d;
  }
  return "";
}

// The check of a random output (see `random` above): "" when it passes, else what is wrong.
std::string compare_random(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " + dtype_name(want.dtype());
  if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + ", expected " + shape_str(want.shape());
  if (want.numel() == 0) return "";
  double lo = element(want, 0), hi = lo;
  bool whole = true;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double w = element(want, i);
    lo = std::min(lo, w);
    hi = std::max(hi, w);
    whole = whole && w == std::floor(w);
  }
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = element(got, i);
    if (!(g >= lo && g <= hi) || (whole && g != std::floor(g))) {
      std::ostringstream os;
      os << "element " << i << " is " << g << ", outside the expected " << (whole ? "whole numbers in [" : "[") << lo
         << ", " << hi << "]";
      return os.str();
    }
  }
  return "";
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> out;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    out.push_back(p);
  }
  return out;
}

// Runs one test; the first word of the result is PASS, FAIL or UNSUPPORTED.
std::string run_test(const fs::path& dir, const Options& o) {
  std::unique_ptr<Model> model;
  try {
    model = load_model((dir / "model.onnx").string());
  } catch (const std::exception& e) {
    return std::string("FAIL load: ") + e.what();
  }
  std::set<std::string> missing;
  missing_ops(*model->graph, *model, o.impl, missing);
  if (opaque_io(*model->graph)) missing.insert("<non-tensor-type>");
  if (!missing.empty()) {
    std::string s = "UNSUPPORTED";
    for (const auto& op : missing) s += " " + op;
    return s;
  }
  const bool random = draws_random(*model->graph);
  ExecOptions eo;
  eo.kernel_impl = o.impl;
  eo.threads = o.threads;
  std::unique_ptr<Executor> ex;
  try {
    ex = std::make_unique<Executor>(*model, eo);
  } catch (const std::exception& e) {
    return std::string("FAIL plan: ") + e.what();
  }
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return "FAIL no test_data_set_* directory";
  for (const auto& set : sets) {
    std::vector<Tensor> inputs, expected;
    try {
      const auto& req = ex->required_inputs();
      auto type_of = [&](const std::vector<std::string>& names, size_t k) -> ValueType {
        ValueId v = k < names.size() ? model->graph->find_value(names[k]) : kNoValue;
        return v == kNoValue ? ValueType{} : model->graph->value(v).type;
      };
      for (const auto& p : numbered(set, "input_")) inputs.push_back(read_value_file(p.string(), type_of(req, inputs.size())));
      // The ONNX test data stores bfloat16 tensors as uint16 bit patterns.
      for (size_t k = 0; k < inputs.size() && k < req.size(); ++k) {
        ValueId v = model->graph->find_value(req[k]);
        if (v != kNoValue && model->graph->value(v).type.elem == DataType::BFloat16 && inputs[k].dtype() == DataType::UInt16)
          inputs[k] = Tensor(DataType::BFloat16, inputs[k].shape(), inputs[k].buffer(), inputs[k].offset());
        // Data that contradicts the model's own declared input type is a defect of the test,
        // which any conforming runtime rejects: report it in its own bucket.
        if (v != kNoValue && inputs[k].is_plain()) {
          const ValueType& ty = model->graph->value(v).type;
          bool bad = ty.is_tensor() && ty.elem != DataType::Undefined && ty.elem != inputs[k].dtype();
          if (ty.is_tensor() && ty.has_shape) {
            bad = bad || static_cast<int>(ty.dims.size()) != inputs[k].rank();
            for (size_t d = 0; !bad && d < ty.dims.size(); ++d)
              bad = ty.dims[d].is_known() && ty.dims[d].value != inputs[k].shape()[d];
          }
          if (bad)
            return "INVALID " + set.filename().string() + ": input '" + req[k] + "' is " +
                   dtype_name(inputs[k].dtype()) + "[" + shape_str(inputs[k].shape()) + "] but the model declares " +
                   ty.str();
        }
      }
      const auto out_names = ex->output_names();
      for (const auto& p : numbered(set, "output_"))
        expected.push_back(read_value_file(p.string(), type_of(out_names, expected.size())));
    } catch (const std::exception& e) {
      return std::string("FAIL reading test data: ") + e.what();
    }
    std::vector<Tensor> got;
    try {
      got = ex->run(inputs);
    } catch (const std::exception& e) {
      return "FAIL " + set.filename().string() + ": " + e.what();
    }
    if (got.size() != expected.size())
      return "FAIL " + set.filename().string() + ": " + std::to_string(got.size()) + " outputs, expected " +
             std::to_string(expected.size());
    auto names = ex->output_names();
    for (size_t i = 0; i < got.size(); ++i) {
      std::string d = random ? compare_random(got[i], expected[i]) : compare_value(got[i], expected[i], o);
      if (!d.empty())
        return "FAIL " + set.filename().string() + ": output " + std::to_string(i) + " '" + names[i] + "': " + d;
    }
  }
  return random ? "RANDOM" : "PASS";
}

std::string run_forked(const fs::path& dir, const Options& o) {
  int fds[2];
  if (pipe(fds) != 0) return run_test(dir, o);
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return run_test(dir, o);
  if (pid == 0) {
    close(fds[0]);
    std::string r = run_test(dir, o);
    size_t off = 0;
    while (off < r.size()) {
      ssize_t w = write(fds[1], r.data() + off, r.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  bool timed_out = false;
  for (;;) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = poll(&p, 1, left);
    if (r == 0) continue;
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out) return "FAIL timed out after " + std::to_string(o.timeout_s) + " s";
  if (WIFSIGNALED(status)) return "FAIL crashed with signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  if (out.empty()) return "FAIL the test process exited without a result";
  return out;
}

int usage(const char* argv0) {
  std::cerr << "usage: " << argv0
            << " [--dir DIR] [--filter SUBSTR]... [--rtol R] [--atol A] [--impl NAME] [--threads N]\n"
               "       [--no-fork] [--timeout S] [--min-passed N] [--verbose]\n"
               "Runs the ONNX backend node tests; exits 1 if any test whose ops are all supported fails,\n"
               "or when fewer than N tests pass.\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage(argv[0]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--dir") o.dir = next();
    else if (a == "--filter") o.filters.push_back(next());
    else if (a == "--rtol") o.rtol = std::stod(next());
    else if (a == "--atol") o.atol = std::stod(next());
    else if (a == "--impl") o.impl = next();
    else if (a == "--threads") o.threads = std::stoi(next());
    else if (a == "--timeout") o.timeout_s = std::stoi(next());
    else if (a == "--min-passed") o.min_passed = std::stoi(next());
    else if (a == "--no-fork") o.fork_each = false;
    else if (a == "--verbose" || a == "-v") o.verbose = true;
    else if (a == "--help" || a == "-h") return usage(argv[0]), 0;
    else return usage(argv[0]);
  }
  std::vector<fs::path> tests;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(o.dir, ec)) {
    if (!e.is_directory() || !fs::exists(e.path() / "model.onnx")) continue;
    std::string name = e.path().filename().string();
    bool keep = o.filters.empty();
    for (const auto& f : o.filters) keep = keep || name.find(f) != std::string::npos;
    if (keep) tests.push_back(e.path());
  }
  if (ec) {
    std::cerr << "conformance: cannot read " << o.dir << ": " << ec.message() << "\n";
    return 2;
  }
  std::sort(tests.begin(), tests.end());
  int passed = 0, failed = 0, unsupported = 0, invalid = 0, divergent = 0, random = 0;
  std::map<std::string, int> missing_count;
  std::vector<std::string> failures;
  for (const auto& t : tests) {
    std::string name = t.filename().string();
    std::string r = o.fork_each ? run_forked(t, o) : run_test(t, o);
    auto known = fusor::conformance::known_divergent().find(name);
    bool is_known = known != fusor::conformance::known_divergent().end();
    if (r == "PASS") {
      ++passed;
      if (is_known) std::cout << "NOW PASSES " << name << ": remove it from known_divergent.h\n";
      if (o.verbose) std::cout << "PASS " << name << "\n";
    } else if (r == "RANDOM") {
      ++random;
      std::cout << "RANDOM " << name << ": type, shape and range as expected (values are not comparable)\n";
    } else if (is_known) {
      ++divergent;
      std::cout << "DIVERGENT " << name << ": " << known->second << "\n  (got: " << r << ")\n" << std::flush;
    } else if (r.rfind("UNSUPPORTED", 0) == 0) {
      ++unsupported;
      std::istringstream is(r.substr(11));
      std::string op;
      while (is >> op) ++missing_count[op];
      if (o.verbose) std::cout << "UNSUPPORTED " << name << ":" << r.substr(11) << "\n";
    } else if (r.rfind("INVALID", 0) == 0) {
      ++invalid;
      std::cout << "INVALID " << name << ": " << r.substr(8) << "\n" << std::flush;
    } else {
      ++failed;
      std::string line = "FAIL " + name + ": " + (r.rfind("FAIL ", 0) == 0 ? r.substr(5) : r);
      std::cout << line << "\n" << std::flush;
      failures.push_back(line);
    }
  }
  std::vector<std::pair<std::string, int>> ops(missing_count.begin(), missing_count.end());
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  std::cout << "\nunsupported ops (" << ops.size() << ", tests needing each):";
  for (const auto& [op, n] : ops) std::cout << " " << op << "(" << n << ")";
  std::cout << "\n\npassed " << passed << " / failed " << failed << " / unsupported " << unsupported;
  if (random) std::cout << " / random (checked by type, shape and range) " << random;
  if (invalid) std::cout << " / invalid test data " << invalid;
  if (divergent) std::cout << " / divergent " << divergent;
  std::cout << " / total " << tests.size() << "\n";
  if (passed < o.min_passed) {
    std::cout << "only " << passed << " tests passed, fewer than --min-passed " << o.min_passed << "\n";
    return 1;
  }
  return failed ? 1 : 0;
}
