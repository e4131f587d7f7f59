#include "engine/session/prepare.h"

#include "engine/util/log.h"
#include "engine/util/stopwatch.h"

namespace fusor {

PreparedSession prepare_session(const ModelSource& source, const PrepareOptions& options) {
  PreparedSession s;
  LoadOptions load;
  load.overrides = options.overrides;
  Stopwatch clock;
  if (source.bytes.empty())
    s.model = load_model(source.path, load);
  else
    s.model = load_model_from_bytes(source.bytes, load, source.name.empty() ? "<bytes>" : source.name,
                                    source.base_dir);
  s.load_ms = clock.ms();
  s.nodes_before = static_cast<int64_t>(s.model->graph->num_nodes());

  clock.reset();
  s.report = optimize(*s.model, options.optimize);
  s.optimize_ms = clock.ms();
  s.nodes_after = static_cast<int64_t>(s.model->graph->num_nodes());

  if (!options.optimized_model_path.empty()) {
    clock.reset();
    save_model(*s.model, options.optimized_model_path);
    s.save_ms = clock.ms();
    FUSOR_LOG(Info) << "saved the optimized model to " << options.optimized_model_path;
  }

  clock.reset();
  s.executor = std::make_unique<Executor>(*s.model, options.exec);
  s.plan_ms = clock.ms();
  return s;
}

}  // namespace fusor
