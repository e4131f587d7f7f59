// A small host application using fusor's library API (include/fusor/fusor.h).
//
//   host_app MODEL [LEVEL] [OPTIMIZED_OUT.onnx]
//
// Creates a session at LEVEL (default all), prints the model's inputs and outputs (symbolic dims
// by name), runs it on deterministic inputs that live in the app's own buffers (borrowed, not
// copied), runs it again, and checks the answers:
//   - both runs give the same outputs, and the second run allocates nothing (the first run's
//     outputs were dropped, so their buffers are reused);
//   - the outputs match an unoptimized session's (level disabled) within 1e-3.
// Prints arena, timing and optimization statistics. Exit 0 when the checks pass, 1 when they
// fail, and the fusor::Exception's exit code when fusor refuses something.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <fusor/fusor.h>

namespace {

std::string dims_text(const fusor::TensorInfo& info) {
  if (!info.has_shape) return "(unknown rank)";
  std::string s;
  for (size_t i = 0; i < info.shape.size(); ++i) {
    s += i ? "x" : "";
    s += info.shape[i] >= 0 ? std::to_string(info.shape[i]) : (info.dim_names[i].empty() ? "?" : info.dim_names[i]);
  }
  return s;
}

// Inputs in buffers the app owns: a ramp in [0, 1), unknown dims set to 1.
struct OwnedInputs {
  std::vector<std::vector<float>> buffers;
  std::vector<fusor::NamedTensor> tensors;
};

OwnedInputs make_inputs(const fusor::Session& s) {
  OwnedInputs in;
  in.buffers.reserve(s.inputs().size());
  for (const fusor::TensorInfo& info : s.inputs()) {
    if (info.element_type != fusor::ElementType::Float)
      throw std::runtime_error("input '" + info.name + "' is " + info.type + "; this example feeds float inputs only");
    std::vector<int64_t> shape;
    int64_t n = 1;
    for (int64_t d : info.shape) {
      shape.push_back(d >= 0 ? d : 1);
      n *= shape.back();
    }
    auto& buf = in.buffers.emplace_back(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) buf[i] = static_cast<float>((i * 37) % 101) / 101.0f;
    in.tensors.emplace_back(info.name, fusor::HostTensor::borrow(fusor::ElementType::Float, shape, buf.data(),
                                                                 buf.size() * sizeof(float)));
  }
  return in;
}

double max_diff(const fusor::HostTensor& a, const fusor::HostTensor& b) {
  if (a.shape() != b.shape() || a.element_type() != fusor::ElementType::Float ||
      b.element_type() != fusor::ElementType::Float)
    return INFINITY;
  const float* x = a.data<float>();
  const float* y = b.data<float>();
  double d = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) return INFINITY;
    d = std::max(d, static_cast<double>(std::fabs(x[i] - y[i])));
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: host_app MODEL [LEVEL] [OPTIMIZED_OUT.onnx]\n";
    return 1;
  }
  try {
    fusor::SessionOptions opts;
    opts.level = fusor::parse_level(argc > 2 ? argv[2] : "all");
    if (argc > 3) opts.optimized_model_path = argv[3];
    fusor::Session session(argv[1], opts);
    std::cout << "fusor " << fusor::version() << ", providers:";
    for (const auto& p : fusor::available_providers()) std::cout << " " << p;
    std::cout << "\n";
    for (const auto& i : session.inputs()) std::cout << "input   " << i.name << "  " << i.type << " " << dims_text(i) << "\n";
    for (const auto& o : session.outputs()) std::cout << "output  " << o.name << "  " << o.type << " " << dims_text(o) << "\n";

    OwnedInputs in = make_inputs(session);
    // The first run's outputs are copied out and dropped, so their buffers go back to the
    // session's pool and the second run can reuse them.
    std::vector<fusor::HostTensor> first;
    for (const fusor::HostTensor& t : session.run(in.tensors)) {
      fusor::HostTensor copy = fusor::HostTensor::allocate(t.element_type(), t.shape());
      std::memcpy(copy.data(), t.data(), t.byte_size());
      first.push_back(copy);
    }
    std::vector<fusor::HostTensor> second = session.run(in.tensors);
    fusor::ArenaStats arena = session.arena_stats();

    fusor::SessionOptions plain = opts;
    plain.level = fusor::OptimizationLevel::Disabled;
    plain.optimized_model_path.clear();
    fusor::Session reference(argv[1], plain);
    std::vector<fusor::HostTensor> expected = reference.run(in.tensors);

    bool ok = first.size() == session.outputs().size() && expected.size() == first.size();
    for (size_t k = 0; ok && k < first.size(); ++k) {
      double repeat = max_diff(first[k], second[k]), vs_plain = max_diff(first[k], expected[k]);
      std::printf("output  %s: %lld values, repeat diff %.3g, vs level disabled %.3g\n", session.outputs()[k].name.c_str(),
                  static_cast<long long>(first[k].element_count()), repeat, vs_plain);
      ok = repeat == 0 && vs_plain <= 1e-3;
    }
    fusor::OptimizationReport rep = session.optimization_report();
    fusor::TimingStats t = session.timing();
    std::printf("level   %s: nodes %lld -> %lld, %zu rules fired, cache %s\n", rep.level.c_str(),
                static_cast<long long>(rep.nodes_before), static_cast<long long>(rep.nodes_after), rep.rules_fired.size(),
                rep.cache.c_str());
    std::printf("arena   %zu bytes planned (%zu without reuse), %d buffers, second run allocs %lld\n", arena.arena_bytes,
                arena.naive_bytes, arena.buffers, static_cast<long long>(arena.last_run_allocs));
    std::printf("timing  init %.1f ms (load %.1f, optimize %.1f, plan %.1f), %lld runs, last %.2f ms\n", t.init_ms,
                t.load_ms, t.optimize_ms, t.plan_ms, static_cast<long long>(t.runs), t.last_run_ms);
    if (arena.last_run_allocs != 0) {
      std::cout << "FAIL: the second run allocated\n";
      ok = false;
    }
    std::cout << (ok ? "host_app: ok\n" : "host_app: FAILED\n");
    return ok ? 0 : 1;
  } catch (const fusor::Exception& e) {
    std::cerr << "host_app: " << fusor::error_code_name(e.code()) << ": " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "host_app: " << e.what() << "\n";
    return 1;
  }
}
