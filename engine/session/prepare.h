// One path from model bytes to a runnable session, shared by `fusor run` / `fusor bench`
// (cli/run_flags.cpp) and the library's fusor::Session (include/fusor/session.h):
//
//   load (with --dim/--shape overrides) -> optimize (refuses a model stamped for another
//   provider) -> optionally save the optimized model -> plan (kernels, memory).
//
// Load and optimize go through the optimized-session cache (load_optimized,
// engine/session/optimize_cached.h): PrepareOptions::use_cache, cache_path and cache_max_bytes
// configure it; PreparedSession::cache says what happened. A hit whose session image holds a plan
// for this setup restores it (engine/session/session_image.h): kernels take their prepacked
// constants from the mapped image and the memory plans are not recomputed. A miss stores the
// image after planning, with that plan. While load and optimize run, a second thread builds the
// kernel registry and the memory limit (process-wide, built once), joined before planning.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "engine/exec/executor.h"
#include "core/ir/model.h"
#include "core/onnx/onnx_io.h"
#include "engine/session/optimize.h"

namespace fusor {

struct ModelSource {
  std::string path;    // read from this file when `bytes` is empty
  std::string bytes;   // a serialized ModelProto
  std::string name;    // bytes: used in messages ("<bytes>" when empty)
  std::string base_dir = ".";  // bytes: where external data is resolved
  static ModelSource file(std::string p) { ModelSource s; s.path = std::move(p); return s; }
  static ModelSource memory(std::string b, std::string n = "<bytes>") {
    ModelSource s; s.bytes = std::move(b); s.name = std::move(n); return s;
  }
};

struct PrepareOptions {
  OptimizeOptions optimize;
  ShapeOverrides overrides;
  ExecOptions exec;
  std::string optimized_model_path;  // "" = do not save
  bool use_cache = true;             // the optimized-session cache (engine/session/optimize_cached.h)
  std::string cache_path;            // "" = the default location ($XDG_CACHE_HOME/fusor/cache.db)
  int64_t cache_max_bytes = 0;       // 0 = $FUSOR_CACHE_MAX_MB or 1 GiB
};

// Where a cached init's time went (all zero with the cache off).
struct CacheTimes {
  double key_ms = 0;    // mapping + hashing the model, external data and rule texts
  double open_ms = 0;   // opening the store, reading the entry
  double map_ms = 0;    // hit: mapping, checking and decoding the image
  double store_ms = 0;  // miss: writing the image and the entry
};

struct PreparedSession {
  std::unique_ptr<Model> model;
  std::unique_ptr<Executor> executor;
  OptimizeReport report;
  int64_t nodes_before = 0, nodes_after = 0;  // top-level nodes
  // load_ms includes times.key_ms (and on a hit open_ms + map_ms); times.store_ms is separate.
  double load_ms = 0, optimize_ms = 0, save_ms = 0, plan_ms = 0;
  CacheTimes times;
  std::string cache = "off";  // "hit" | "miss" | "off"
  bool restored = false;      // the plan came from a session image (no packing, no planning)
  // restored: prepacked constants the kernels got from the image / had to pack (none, normally)
  int64_t prepacked_mapped = 0, prepacked_packed = 0;
  double init_ms() const { return load_ms + optimize_ms + save_ms + plan_ms + times.store_ms; }
};

// Throws fusor::Error: BadInput for a bad model / rule file / other provider's model, Usage for
// bad options.
PreparedSession prepare_session(const ModelSource& source, const PrepareOptions& options);

}  // namespace fusor
