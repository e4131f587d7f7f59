#include "engine/session/api_options.h"
#include "engine/session/partition.h"

#include "engine/session/api_error.h"
#include "engine/session/optimized_stamp.h"

namespace fusor {

const char* level_name(OptimizationLevel level) { return opt_level_name(static_cast<OptLevel>(level)); }

OptimizationLevel parse_level(std::string_view name) {
  return api_call([&] { return static_cast<OptimizationLevel>(parse_opt_level(name)); });
}

std::vector<std::string> available_providers() {
  std::vector<std::string> out;
  for (const std::string& p : known_providers())
    if (provider_unavailable_reason(p).empty()) out.push_back(p);  // defined and its kernels built
  return out;
}

const char* version() { return engine_version(); }

PrepareOptions prepare_options(const SessionOptions& o) {
  return api_call([&] {
    static_assert(static_cast<int>(OptimizationLevel::All) == static_cast<int>(OptLevel::All));
    PrepareOptions p;
    p.optimize.level = static_cast<OptLevel>(o.level);
    if (o.providers.empty()) throw_api(ErrorCode::InvalidArgument, "SessionOptions: the provider list is empty");
    for (const std::string& name : o.providers) check_provider(name);
    p.optimize.providers = o.providers;
    p.optimize.rule_files = o.rule_files;
    p.optimize.disabled = o.disabled_rules;
    p.optimize.no_default_rules = o.no_default_rules;
    p.optimize.rules_root = o.rules_dir;
    if (o.threads < 0)
      throw_api(ErrorCode::InvalidArgument, "SessionOptions: threads must be 0 (all cores) or more, got " +
                                                std::to_string(o.threads));
    p.exec.threads = o.threads;
    p.exec.profile = o.profile;
    p.optimized_model_path = o.optimized_model_path;
    p.use_cache = o.use_cache;
    p.cache_path = o.cache_path;
    for (const auto& [name, v] : o.dim_overrides) {
      if (v < 0) throw_api(ErrorCode::InvalidArgument, "dim override '" + name + "': negative value");
      p.overrides.dims.emplace_back(name, v);
    }
    for (const auto& [name, dims] : o.shape_overrides) p.overrides.shapes.emplace_back(name, Shape(dims.begin(), dims.end()));
    return p;
  });
}

}  // namespace fusor
