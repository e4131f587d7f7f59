// fusor::SessionOptions: how a Session loads, optimizes and runs a model. Every field has the
// CLI's default; docs/host-api.md maps them to the CLI flags.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fusor {

// As ONNX Runtime's levels; each includes the ones before it.
enum class OptimizationLevel { Disabled, Basic, Extended, Layout, All };

// "disabled" | "basic" | "extended" | "layout" | "all".
const char* level_name(OptimizationLevel level);
// Throws Exception(InvalidArgument) listing the names.
OptimizationLevel parse_level(std::string_view name);
// Provider names this build knows, in the CLI's order ("cpu").
std::vector<std::string> available_providers();
// The engine version ("0.1.0").
const char* version();

struct SessionOptions {
  OptimizationLevel level = OptimizationLevel::All;
  std::vector<std::string> providers = {"cpu"};  // priority list (--provider)
  int threads = 0;                               // intra-op threads, the caller included; 0 = all cores
  std::vector<std::string> rule_files;           // extra rule files (--rules)
  std::vector<std::string> disabled_rules;       // rules or built-in passes to skip (--disable)
  bool no_default_rules = false;                 // --no-default-rules
  // Where the shipped providers/ and rules/ are: "" = $FUSOR_RULES_DIR, else the source tree the
  // library was built from. An installed package has them in <prefix>/share/fusor
  // (find_package(fusor) sets fusor_RULES_DIR).
  std::string rules_dir;
  // The optimized-session cache (--cache FILE / --no-cache; docs/cli.md): a session whose model,
  // options and rules were optimized before loads the stored result instead.
  bool use_cache = true;
  std::string cache_path;                        // "" = $XDG_CACHE_HOME/fusor/cache.db
  std::string optimized_model_path;              // write the optimized model here (-o); "" = don't
  std::vector<std::pair<std::string, int64_t>> dim_overrides;                 // --dim NAME=V
  std::vector<std::pair<std::string, std::vector<int64_t>>> shape_overrides;  // --shape INPUT=AxB
  bool profile = false;                          // record per-node times of each run
};

// Per-run options (ONNX Runtime's RunOptions). A run given them stops at the next node boundary
// (before each node, and at each Loop/Scan iteration and If branch) once `terminate` is set, from
// any thread, or once `timeout_ms` (> 0) has passed since the run began; it then throws
// fusor::Exception(ErrorCode::Cancelled) naming the node it stopped at. One kernel is not
// interrupted. Keep the object alive while runs use it; set terminate back to false to reuse it.
struct RunOptions {
  std::atomic<bool> terminate{false};
  double timeout_ms = 0;
};

}  // namespace fusor
