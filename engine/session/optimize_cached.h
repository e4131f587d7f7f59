// Load and optimize a model through the optimized-session cache (cache/): the one entry point
// that `fusor optimize`, prepare_session (run, bench, the library's Session) call.
//
// Key: XXH3-128 (cache/hash.h) over the model's bytes and every external-data file it references,
// the provider list, the level, the texts of the provider definitions and of the rule files used
// (the first provider's files for the level, --rules), --disable, --no-default-rules,
// --dim/--shape, the engine version and build, and the CPU features. The model file is mapped
// once: the same bytes are hashed on every lookup (a model edited in place, even keeping its size
// and mtime, never gets a stale session) and, on a miss, parsed. Files the rule files import are
// not parsed for on every lookup (that costs more than the rest of a hit): an entry records them
// with their hash, and a hit whose imports changed is rebuilt.
//
// An entry is a session image (engine/session/session_image.h, cache/image_file.h): the optimized
// model laid out to be mapped and used in place, plus, once a session was planned from it, the
// plan (prepacked weights, memory plans). A hit maps it: no parsing, no shape inference, no
// packing. A miss loads and optimizes as without the cache and stores the image (at once for
// `fusor optimize`; after planning for prepare_session, store_now=false, so the plan goes in).
// --trace needs the rewrite itself: it runs with the cache off (`fusor explain` calls
// optimize() directly).
//
// The cache never makes a run fail: an unusable, damaged or busy store, or a damaged, truncated
// or foreign image, is a warning on stderr and the run goes on as a miss or with the cache off
// (cache/store.h and cache/image_store.h have the safety contract).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/ir/model.h"
#include "core/onnx/onnx_io.h"
#include "engine/session/optimize.h"
#include "engine/session/prepare.h"

namespace fusor {

struct CacheOptions {
  bool enabled = true;    // --no-cache sets false
  std::string path;       // --cache FILE; "" = cache::default_cache_path()
  int64_t max_bytes = 0;  // --cache-max-mb; 0 = cache::default_max_bytes() ($FUSOR_CACHE_MAX_MB or 1 GiB)
};

struct SessionImageState;  // engine/session/session_image.h

struct OptimizedModel {
  std::unique_ptr<Model> model;
  OptimizeReport report;      // on a hit: the stored rules_fired (no trace, no explain)
  int64_t nodes_before = 0;   // top-level nodes of the original model
  std::map<std::string, int64_t> ops_before;  // its op histogram at all depths
  // miss/off: parse + inference (+ keying), and optimize (+ lookup, + storing when store_now);
  // hit: keying, and opening the store + mapping the image (load_ms); optimize_ms 0.
  double load_ms = 0, optimize_ms = 0;
  CacheTimes times;
  std::string cache = "off";  // "hit" | "miss" | "off"
  // With the cache on: the entry found, or the one to store (prepare_session plans, then stores).
  std::shared_ptr<SessionImageState> image;
};

// Throws like load_model and optimize(); never because of the cache. With `store_now` false, a
// miss is not stored here: the caller stores it with store_session_image (session_image.h).
OptimizedModel load_optimized(const ModelSource& source, const ShapeOverrides& overrides,
                              const OptimizeOptions& options, const CacheOptions& cache, bool store_now = true);

// The cache key of this request; nullopt when the request is not cacheable (trace, or
// a model file that cannot be read: the loader reports that). Exposed for tests.
std::optional<std::string> optimized_cache_key(const ModelSource& source, const ShapeOverrides& overrides,
                                               const OptimizeOptions& options);

}  // namespace fusor
