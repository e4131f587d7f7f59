// fusor::Session: a model loaded, optimized and planned once, then run many times.
//
//   fusor::SessionOptions opts;
//   opts.level = fusor::OptimizationLevel::Extended;
//   fusor::Session s("model.onnx", opts);
//   std::vector<float> pixels(1 * 3 * 224 * 224);
//   auto outs = s.run({{"data", fusor::HostTensor::borrow(fusor::ElementType::Float, {1, 3, 224, 224},
//                                                         pixels.data(), pixels.size() * 4)}});
//
// - Inputs are never copied: the kernels read the caller's buffers (borrow/share). Outputs are
//   handed over without a copy: each HostTensor keeps its buffer alive; dropping it returns the
//   buffer to the session's pool, so steady-state runs allocate nothing.
// - run() may be called from several threads at once (each call takes its own arena).
// - Errors: fusor::Exception (error.h). Construction throws for a missing file (NoSuchFile), a
//   bad model or rule file or a model optimized for another provider (InvalidGraph), bad options
//   (InvalidArgument). run() throws InvalidArgument for an unknown, missing or duplicated input
//   name, a wrong element type, rank or known dim, naming the input and what the model declares.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fusor/error.h"
#include "fusor/options.h"
#include "fusor/tensor.h"

namespace fusor {

struct ArenaStats {
  size_t arena_bytes = 0;    // planned tensor arena (main graph and subgraphs)
  size_t scratch_bytes = 0;  // planned kernel scratch
  size_t naive_bytes = 0;    // every intermediate in its own buffer (no reuse)
  int buffers = 0;           // distinct arena buffers after reuse
  int intermediates = 0;     // values placed in the arena
  int inplace = 0;           // values written in place over a dying input
  int64_t last_run_allocs = 0;     // system allocations of tensor data in the last run
  int64_t last_run_fallbacks = 0;  // tensors that did not fit the plan in the last run
};

struct TimingStats {
  double load_ms = 0, optimize_ms = 0, save_ms = 0, plan_ms = 0;
  double init_ms = 0;        // their sum
  int64_t runs = 0;
  double last_run_ms = 0, total_run_ms = 0;
};

struct OptimizationReport {
  std::string level;
  std::vector<std::string> providers;
  std::map<std::string, int64_t> rules_fired;  // rule or built-in pass -> times it fired
  int64_t nodes_before = 0, nodes_after = 0;   // top-level nodes
  std::string cache = "off";                   // "hit" | "miss" | "off"
  std::string rule_set_hash;
  std::string optimized_model_path;            // "" when not saved
};

struct NodeTime {
  std::string name, op;
  int depth = 0;  // 0 main graph, +1 per subgraph level
  double start_us = 0, dur_us = 0;
};

struct ModelMetadata {
  std::string producer_name, producer_version, graph_name, domain, description;
  int64_t version = 0;
  std::map<std::string, std::string> custom;  // metadata_props (fusor.provider, fusor.level, ...)
};

class Session {
 public:
  // Loads, optimizes (writing options.optimized_model_path when set) and plans the model.
  explicit Session(const std::string& path, const SessionOptions& options = {});
  // The same from a serialized ModelProto; external data is resolved against `base_dir`.
  static Session from_bytes(std::string bytes, const SessionOptions& options = {},
                            const std::string& base_dir = ".");
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;
  ~Session();

  // Inputs the caller feeds (initializer-backed graph inputs excluded), in graph order.
  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;

  // Every output, in graph order.
  std::vector<HostTensor> run(const std::vector<NamedTensor>& inputs);
  // The named outputs, in the order asked (InvalidArgument for an unknown name). The whole graph
  // still runs.
  std::vector<HostTensor> run(const std::vector<NamedTensor>& inputs, const std::vector<std::string>& output_names);
  // The same, cancellable through `run_options` (options.h): Exception(Cancelled) when stopped.
  std::vector<HostTensor> run(const std::vector<NamedTensor>& inputs, const std::vector<std::string>& output_names,
                              const RunOptions& run_options);

  ArenaStats arena_stats() const;
  TimingStats timing() const;
  OptimizationReport optimization_report() const;
  // Per-node times of the last run (empty unless options.profile).
  std::vector<NodeTime> last_profile() const;
  // The last run's profile as a Chrome trace (chrome://tracing, Perfetto).
  std::string last_profile_chrome_trace() const;
  ModelMetadata metadata() const;
  const SessionOptions& options() const;

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::vector<HostTensor> run_controlled(const std::vector<NamedTensor>& inputs,
                                         const std::vector<std::string>& output_names, const RunOptions* run_options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fusor
