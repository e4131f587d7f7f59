// Load and optimize a model through the optimized-session cache (cache/): the one entry point
// that `fusor optimize`, prepare_session (run, bench, the library's Session) call.
//
// Key: SHA-256 over the model's bytes and every external-data file it references, the provider
// list, the level, the texts of the provider definitions and of the rule files used (the first
// provider's files for the level, --rules), --disable, --no-default-rules, --dim/--shape, the
// engine version and build, and the CPU features. Files those rule files import are not parsed
// for on every lookup (that costs more than the rest of a hit): an entry records them with their
// SHA-256, and a hit whose imports changed is rebuilt. A hit returns the stored optimized model (loaded without
// shape inference) with the stored rules_fired counts and original node counts; a miss loads and
// optimizes as without the cache and stores the result. --trace needs the rewrite itself: it
// runs with the cache off (`fusor explain` calls optimize() directly).
//
// The cache never makes a run fail: an unusable, damaged or busy store is a warning on stderr and
// the run goes on as a miss or with the cache off (cache/store.h has the safety contract).
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

struct OptimizedModel {
  std::unique_ptr<Model> model;
  OptimizeReport report;      // on a hit: the stored rules_fired (no trace, no explain)
  int64_t nodes_before = 0;   // top-level nodes of the original model
  std::map<std::string, int64_t> ops_before;  // its op histogram at all depths
  // miss/off: parse + inference, and optimize (+ storing, on a miss);
  // hit: hashing the model bytes, and fetching + decoding the entry.
  double load_ms = 0, optimize_ms = 0;
  std::string cache = "off";  // "hit" | "miss" | "off"
};

// Throws like load_model and optimize(); never because of the cache.
OptimizedModel load_optimized(const ModelSource& source, const ShapeOverrides& overrides,
                              const OptimizeOptions& options, const CacheOptions& cache);

// The cache key of this request; nullopt when the request is not cacheable (trace, or
// a model file that cannot be read: the loader reports that). Exposed for tests.
std::optional<std::string> optimized_cache_key(const ModelSource& source, const ShapeOverrides& overrides,
                                               const OptimizeOptions& options);

}  // namespace fusor
