#include "engine/session/prepare.h"

#include "engine/session/optimize_cached.h"
#include "engine/session/partition.h"

#include "core/util/log.h"
#include "core/util/stopwatch.h"

namespace fusor {

PreparedSession prepare_session(const ModelSource& source, const PrepareOptions& options) {
  PreparedSession s;
  CacheOptions cache;
  cache.enabled = options.use_cache;
  cache.path = options.cache_path;
  cache.max_bytes = options.cache_max_bytes;
  OptimizedModel loaded = load_optimized(source, options.overrides, options.optimize, cache);
  s.model = std::move(loaded.model);
  s.report = std::move(loaded.report);
  s.load_ms = loaded.load_ms;
  s.optimize_ms = loaded.optimize_ms;
  s.cache = loaded.cache;
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
  // Each node runs on the first provider of the list that can run it (cpu last); a cache hit
  // skipped optimize(), so the partition is computed here for both.
  Partition part = partition_model(*s.model, ProviderCatalog::load_or_throw(options.optimize.providers, options.optimize.rules_root));
  s.report.provider_nodes = part.nodes_per_provider;
  ExecOptions exec = options.exec;
  exec.kernel_impl_for = [part = std::make_shared<Partition>(std::move(part))](const Node& n) { return part->kernel_impl(n); };
  s.executor = std::make_unique<Executor>(*s.model, exec);
  s.plan_ms = clock.ms();
  return s;
}

}  // namespace fusor
