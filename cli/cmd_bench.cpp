// fusor bench MODEL [run's flags] [--runs N] [--warmup N] [--json] [--profile FILE]
#include <algorithm>
#include <fstream>
#include <iostream>

#include <unistd.h>

#include "cli/command.h"
#include "cli/report.h"
#include "cli/run_flags.h"
#include "core/util/error.h"
#include "core/util/json.h"
#include "core/util/stopwatch.h"

namespace fusor::cli {

namespace {

int run_bench(const Args& args) {
  const int64_t runs = args.get_int("runs", 20, 1, 1000000);
  const int64_t warmup = args.get_int("warmup", 3, 0, 1000000);
  auto profile_path = args.get("profile");
  RunSession s = open_run_session(args, profile_path.has_value());
  Executor& ex = *s.executor;

  std::vector<Tensor> outs;
  RunStats st;
  const RunControl* control = s.start_timeout();
  for (int64_t i = 0; i < warmup; ++i) {
    outs.clear();  // hand the output buffers back to the pool, as a caller that is done with them would
    outs = ex.run(s.inputs, &st, control);
  }
  std::vector<double> times;
  int64_t allocs = 0, fallbacks = 0;
  Stopwatch total, since_progress;
  const bool progress_tty = ::isatty(STDERR_FILENO) == 1;
  bool progress_shown = false;
  for (int64_t i = 0; i < runs; ++i) {
    outs.clear();
    Stopwatch clock;
    outs = ex.run(s.inputs, &st, control);
    times.push_back(clock.ms());
    allocs = std::max(allocs, st.allocs);
    fallbacks = std::max(fallbacks, st.fallbacks);
    // Progress lines rewrite themselves with '\r': only on a terminal, never into a file or pipe.
    if (progress_tty && total.ms() > 2000 && since_progress.ms() > 1000 && i + 1 < runs) {
      std::vector<double> sorted = times;
      std::sort(sorted.begin(), sorted.end());
      std::cerr << "\rbench: run " << (i + 1) << "/" << runs << ", median so far " << ms_text(sorted[sorted.size() / 2])
                << "   " << std::flush;
      progress_shown = true;
      since_progress.reset();
    }
  }
  if (progress_shown) std::cerr << "\n";
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  double mean = 0;
  for (double t : times) mean += t / static_cast<double>(n);
  MemoryReport mem = ex.memory_report();

  if (profile_path) {
    std::ofstream f(*profile_path);
    f << chrome_trace_json(st.profile);
    if (!f) throw_bad_input(*profile_path + ": cannot write the profile");
  }

  if (args.has("json")) {
    json::Value v = json::Value::object();
    v.set("model", s.model->path);
    v.set("level", opt_level_name(s.level));
    v.set("threads", static_cast<int64_t>(ex.threads().num_threads()));
    v.set("runs", runs);
    v.set("warmup", warmup);
    v.set("init_ms", round_ms(s.init_ms()));
    v.set("cache", s.cache);
    // Where init went: key (hashing the model), open (the store and the entry), map (a hit: the
    // session image), plan (kernels and memory: restored on a hit), store (a miss: the image).
    json::Value init = json::Value::object();
    init.set("key_ms", round_ms(s.times.key_ms));
    init.set("open_ms", round_ms(s.times.open_ms));
    init.set("map_ms", round_ms(s.times.map_ms));
    init.set("plan_ms", round_ms(s.plan_ms));
    init.set("store_ms", round_ms(s.times.store_ms));
    init.set("restored", s.restored);
    init.set("prepacked_mapped", s.prepacked_mapped);
    v.set("init_breakdown", std::move(init));
    v.set("provider_nodes", json::Value(s.provider_nodes));
    v.set("median_ms", round_ms(median));
    v.set("min_ms", round_ms(sorted.front()));
    v.set("mean_ms", round_ms(mean));
    v.set("max_ms", round_ms(sorted.back()));
    v.set("arena_bytes", static_cast<int64_t>(mem.arena_bytes));
    v.set("scratch_bytes", static_cast<int64_t>(mem.scratch_bytes));
    v.set("naive_bytes", static_cast<int64_t>(mem.naive_bytes));
    v.set("allocs_per_run", allocs);
    if (profile_path) v.set("profile", *profile_path);
    std::cout << v.dump(2) << "\n";
    return kExitOk;
  }
  std::ostream& out = std::cout;
  out << "model       " << s.model->path << " (level " << opt_level_name(s.level) << ", "
      << ex.threads().num_threads() << " thread(s))\n";
  out << "init        " << ms_text(s.init_ms()) << " (load " << ms_text(s.load_ms) << ", optimize "
      << ms_text(s.optimize_ms) << ", plan " << ms_text(s.plan_ms) << "; cache " << s.cache << ")\n";
  if (s.cache != "off")
    out << "cache       key " << ms_text(s.times.key_ms) << ", open " << ms_text(s.times.open_ms) << ", map "
        << ms_text(s.times.map_ms) << ", plan " << ms_text(s.plan_ms)
        << (s.restored ? " (restored from the image)" : "") << ", store " << ms_text(s.times.store_ms) << "\n";
  out << "latency     median " << ms_text(median) << ", min " << ms_text(sorted.front()) << ", mean "
      << ms_text(mean) << ", max " << ms_text(sorted.back()) << " over " << runs << " runs after " << warmup
      << " warm-up\n";
  out << "arena       " << bytes_text(static_cast<int64_t>(mem.arena_bytes)) << " for "
      << bytes_text(static_cast<int64_t>(mem.naive_bytes)) << " of intermediates (" << mem.intermediates
      << " tensors in " << mem.buffers << " buffers, " << mem.inplace << " in place), scratch "
      << bytes_text(static_cast<int64_t>(mem.scratch_bytes)) << "\n";
  out << "allocs/run  " << allocs << (fallbacks ? " (" + std::to_string(fallbacks) + " did not fit the plan)" : "")
      << "\n";
  if (profile_path) out << "profile     " << *profile_path << " (Chrome trace of the last run)\n";
  return kExitOk;
}

}  // namespace

Command bench_command() {
  Command c;
  c.name = "bench";
  c.summary = "measure session init, latency and memory of a model";
  c.usage = "MODEL [run's input/execution/optimization flags] [--runs N] [--warmup N] [--json] [--profile FILE]";
  c.description =
      "Loads, optimizes and plans MODEL (init), runs it --warmup times, then times --runs runs.\n"
      "Reports init, median and min latency, the arena against the bytes the intermediates would take\n"
      "without reuse, and the executor's system allocations per run after warm-up (the largest count\n"
      "seen in a timed run). --profile writes per-node times of the last run as a Chrome trace.";
  c.declare = [](ArgParser& p) {
    p.positional("MODEL", "an .onnx file")
        .option("runs", "N", "timed runs (default 20)")
        .option("warmup", "N", "untimed runs first (default 3)")
        .option("profile", "FILE", "write per-node times of the last run as a Chrome trace JSON")
        .flag("json", "print a JSON report (keys in docs/cli.md)");
    add_run_flags(p);
  };
  c.run = run_bench;
  return c;
}

}  // namespace fusor::cli
