#include "engine/session/prepare.h"

#include <map>
#include <system_error>
#include <thread>

#include "engine/session/optimize_cached.h"
#include "engine/session/partition.h"
#include "engine/session/session_image.h"

#include "core/util/log.h"
#include "core/util/memory_limit.h"
#include "kernels/kernel.h"
#include "core/util/stopwatch.h"

namespace fusor {

namespace {

// Builds the process-wide tables planning needs (the kernel registry, the memory limit) on a
// second thread while this one keys, looks up and maps the cached session (or loads and
// optimizes): on a cache hit the registry alone was about a tenth of the start. Joined before
// the plan; both are function-local statics, so a use from this thread meanwhile just waits.
class WarmUp {
 public:
  WarmUp() {
    try {
      t_ = std::thread([] {
        try {
          KernelRegistry::global();
          memory_limit();
        } catch (...) {
          // Out of memory here: the planning thread builds them again and reports it.
        }
      });
    } catch (const std::system_error&) {
      // No thread to be had (a process limit): the planning thread builds them itself.
    }
  }
  ~WarmUp() { join(); }
  void join() {
    if (t_.joinable()) t_.join();
  }

 private:
  std::thread t_;
};

}  // namespace

PreparedSession prepare_session(const ModelSource& source, const PrepareOptions& options) {
  PreparedSession s;
  Stopwatch spawn_clock;
  WarmUp warm;
  const double spawn_ms = spawn_clock.ms();  // counted with the plan, which waits for it
  CacheOptions cache;
  cache.enabled = options.use_cache;
  cache.path = options.cache_path;
  cache.max_bytes = options.cache_max_bytes;
  OptimizedModel loaded = load_optimized(source, options.overrides, options.optimize, cache, /*store_now=*/false);
  s.model = std::move(loaded.model);
  s.report = std::move(loaded.report);
  s.load_ms = loaded.load_ms;
  s.optimize_ms = loaded.optimize_ms;
  s.cache = loaded.cache;
  s.times = loaded.times;
  s.nodes_before = loaded.nodes_before;
  s.nodes_after = static_cast<int64_t>(s.model->graph->num_nodes());
  Stopwatch clock;

  if (!options.optimized_model_path.empty()) {
    clock.reset();
    save_model(*s.model, options.optimized_model_path);
    s.save_ms = clock.ms();
    FUSOR_LOG(Info) << "saved the optimized model to " << options.optimized_model_path;
  }

  clock.reset();
  warm.join();
  ExecOptions exec = options.exec;
  SessionImageState* image = loaded.image.get();
  const std::string variant = image ? image_variant(exec, options.optimize.providers) : std::string();
  std::map<std::string, int64_t> provider_nodes;
  if (image && restore_exec_options(*image, *s.model, variant, exec, provider_nodes)) {
    // A session image with a plan for this setup: stored kernel choices, prepacked constants
    // mapped from the image, memory plans restored.
    s.report.provider_nodes = provider_nodes;
    s.restored = true;
  } else {
    // Each node runs on the first provider of the list that can run it (cpu last); a cache hit
    // skipped optimize(), so the partition is computed here for both.
    Partition part =
        partition_model(*s.model, ProviderCatalog::load_or_throw(options.optimize.providers, options.optimize.rules_root));
    s.report.provider_nodes = part.nodes_per_provider;
    exec.kernel_impl_for = [part = std::make_shared<Partition>(std::move(part))](const Node& n) {
      return part->kernel_impl(n);
    };
    if (image) {
      image->needs_store = true;  // a miss, or an image without a plan for this setup
      image->recorder = std::make_shared<RecordingPrepackSource>();
      exec.prepack = image->recorder;
    }
  }
  s.executor = std::make_unique<Executor>(*s.model, exec);
  s.plan_ms = clock.ms() + spawn_ms;
  if (auto* stored = dynamic_cast<StoredPrepackSource*>(exec.prepack.get())) {
    s.prepacked_mapped = static_cast<int64_t>(stored->served());
    s.prepacked_packed = static_cast<int64_t>(stored->filled());
  }
  if (image && image->needs_store) {
    clock.reset();
    store_session_image(*image, *s.model, s.executor.get(), variant, &exec, &s.report.provider_nodes);
    image->recorder.reset();
    s.times.store_ms = clock.ms();
  }
  // The image (mapped weights and prepacked buffers) lives as long as the model's tensors and the
  // kernels that point into it.
  return s;
}

}  // namespace fusor
