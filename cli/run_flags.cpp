#include "cli/run_flags.h"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <tuple>

#include "cli/optimize_flags.h"
#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "engine/session/inputs.h"
#include "engine/session/prepare.h"
#include "core/util/log.h"
#include "core/util/stopwatch.h"

namespace fusor::cli {

void add_run_flags(ArgParser& p) {
  p.section("input flags")
      .option("input", "NAME=FILE", "read input NAME from FILE (.pb TensorProto or .npy)", true)
      .option("seed", "S", "seed of the random inputs (default 0)")
      .option("range", "LO,HI", "floating-point random inputs are uniform in [LO, HI) (default 0,1)")
      .option("int-range", "LO,HI", "integer random inputs are uniform in [LO, HI] (default 0,9)")
      .option("value", "NAME=V", "fill every element of input NAME with V", true)
      .section("execution flags")
      .option("threads", "N", "intra-op threads, the caller included (default: all cores)")
      .option("timeout", "SECONDS", "stop running the model after SECONDS (exit 5); bench: all runs together");
  add_optimize_flags(p);
}

RunSession open_run_session(const Args& args, bool profile) {
  OptimizeFlags flags = parse_optimize_flags(args);
  RunSession s;
  s.level = flags.options.level;
  s.threads = static_cast<int>(args.get_int("threads", 0, 0, 4096));
  if (auto t = args.get("timeout")) {
    char* end = nullptr;
    s.timeout_s = std::strtod(t->c_str(), &end);
    if (t->empty() || !end || *end || !(s.timeout_s > 0) || s.timeout_s > 1e9)
      throw_usage("--timeout: expected a positive number of seconds, got '" + *t + "'");
  }
  InputOptions in;
  in.seed = static_cast<uint64_t>(args.get_int("seed", 0, 0));
  if (auto r = args.get("range")) std::tie(in.lo, in.hi) = parse_range(*r, "--range");
  if (auto r = args.get("int-range")) {
    auto [lo, hi] = parse_range(*r, "--int-range");
    in.int_lo = static_cast<int64_t>(lo);
    in.int_hi = static_cast<int64_t>(hi);
    if (static_cast<double>(in.int_lo) != lo || static_cast<double>(in.int_hi) != hi)
      throw_usage("--int-range: expected integers, got '" + *r + "'");
  }
  for (const std::string& v : args.all("value")) in.values.push_back(parse_value_flag(v));
  // Read the input files before the (possibly slow) model load, so a bad file fails fast.
  for (const std::string& spec : args.all("input")) s.inputs.push_back(read_named_input(spec));

  PrepareOptions prep;
  prep.optimize = flags.options;
  prep.overrides = flags.overrides;
  prep.use_cache = flags.cache.enabled;
  prep.cache_path = flags.cache.path;
  prep.cache_max_bytes = flags.cache.max_bytes;
  prep.exec.threads = s.threads;
  prep.exec.profile = profile;
  PreparedSession ps = prepare_session(ModelSource::file(args.positional(0)), prep);
  s.model = std::move(ps.model);
  s.executor = std::move(ps.executor);
  s.load_ms = ps.load_ms;
  s.optimize_ms = ps.optimize_ms;
  s.plan_ms = ps.plan_ms;
  s.cache = ps.cache;
  s.times = ps.times;
  s.restored = ps.restored;
  s.prepacked_mapped = ps.prepacked_mapped;
  s.provider_nodes = ps.report.provider_nodes;

  std::vector<std::string> warnings;
  complete_inputs(*s.model->graph, s.inputs, in, &warnings);
  for (const std::string& w : warnings) FUSOR_LOG(Warn) << w;
  return s;
}

const RunControl* RunSession::start_timeout() {
  if (timeout_s <= 0) return nullptr;
  control.deadline = RunControl::Clock::now() + std::chrono::duration_cast<RunControl::Clock::duration>(
                                                   std::chrono::duration<double>(timeout_s));
  char buf[64];
  std::snprintf(buf, sizeof buf, "--timeout %g s expired", timeout_s);
  control.deadline_reason = buf;
  return &control;
}

std::string sanitize_name(const std::string& name) {
  std::string out = name;
  for (char& c : out)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) c = '_';
  return out;
}

}  // namespace fusor::cli
