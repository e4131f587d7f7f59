// What `fusor run` and `fusor bench` share: the flags that load, optimize and feed a model, and
// the session they build from them.
//
//   --input NAME=FILE (repeatable; .pb TensorProto or .npy)   --threads N (default: all cores)
//   --timeout SECONDS (the model's runs are cancelled after it: exit 5)
//   --seed S   --range LO,HI   --int-range LO,HI   --value NAME=V (repeatable)
//   plus every optimization flag of `optimize` (--level, --provider, --dim, --shape) and the cache
//   flags (--cache FILE, --no-cache, --cache-max-mb N).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/args.h"
#include "engine/exec/executor.h"
#include "core/ir/model.h"
#include "engine/session/optimize.h"
#include "engine/session/prepare.h"

namespace fusor::cli {

void add_run_flags(ArgParser& p);

struct RunSession {
  std::unique_ptr<Model> model;
  std::unique_ptr<Executor> executor;
  NamedTensors inputs;      // given and generated, in the model's input order for generated ones
  OptLevel level = OptLevel::All;
  int threads = 0;
  double load_ms = 0, optimize_ms = 0, plan_ms = 0;
  std::string cache = "off";  // the optimized-session cache: "hit" | "miss" | "off"
  CacheTimes times;           // key, open, map (hit), store (miss)
  bool restored = false;      // the plan came from the session image
  int64_t prepacked_mapped = 0;
  std::map<std::string, int64_t> provider_nodes;  // top-level nodes per provider (partitioning)
  double timeout_s = 0;                             // --timeout; 0 = none
  RunControl control;
  double init_ms() const { return load_ms + optimize_ms + plan_ms + times.store_ms; }
  // Starts the --timeout clock; the control to pass to Executor::run (nullptr without --timeout).
  const RunControl* start_timeout();
};

// Loads MODEL (positional 0), optimizes it, builds the executor and the inputs. Unset symbolic
// dims are warned about on stderr. `profile` turns on per-node timing in the executor.
RunSession open_run_session(const Args& args, bool profile = false);

// The file-name form of a tensor name, as ort_peer.js --dump writes it: [^A-Za-z0-9_.-] -> '_'.
std::string sanitize_name(const std::string& name);

}  // namespace fusor::cli
