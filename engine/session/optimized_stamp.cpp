#include "engine/session/optimized_stamp.h"

#include "core/util/error.h"
#include "core/ir/symbol.h"
#include "core/ops/fusor_ops.h"

namespace fusor {

namespace {

const std::string* find_meta(const Model& m, const char* key) {
  for (const auto& [k, v] : m.metadata)
    if (k == key) return &v;
  return nullptr;
}

void set_meta(Model& m, const char* key, const std::string& value) {
  for (auto& [k, v] : m.metadata)
    if (k == key) { v = value; return; }
  m.metadata.emplace_back(key, value);
}

int level_rank(const std::string& name) {
  try {
    return static_cast<int>(parse_opt_level(name));
  } catch (const Error&) {
    return -1;
  }
}

std::string join(const std::vector<std::string>& xs) {
  std::string s;
  for (const auto& x : xs) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

const char* engine_version() {
#ifdef FUSOR_ENGINE_VERSION
  return FUSOR_ENGINE_VERSION;
#else
  return "unknown";
#endif
}

std::optional<OptimizedStamp> read_stamp(const Model& model) {
  const std::string* provider = find_meta(model, kMetaProvider);
  if (!provider) return std::nullopt;
  OptimizedStamp s;
  s.provider = *provider;
  auto get = [&](const char* key) {
    const std::string* v = find_meta(model, key);
    return v ? *v : std::string();
  };
  s.providers = get(kMetaProviders);
  s.level = get(kMetaLevel);
  s.rule_set_hash = get(kMetaRuleSetHash);
  s.version = get(kMetaVersion);
  return s;
}

void check_stamp_provider(const Model& model, const std::vector<std::string>& providers) {
  auto stamp = read_stamp(model);
  if (!stamp) return;
  for (const std::string& p : providers)
    if (p == stamp->provider) return;
  std::string where = model.path.empty() ? "the model" : model.path;
  throw_bad_input(where + ": optimized by fusor for provider '" + stamp->provider + "' (metadata " + kMetaProvider +
                  ", level " + (stamp->level.empty() ? "?" : stamp->level) + "), but this session's providers are " +
                  join(providers) + ": its fused ops target '" + stamp->provider +
                  "' kernels. Run it with --provider " + stamp->provider + ", or optimize the original model for " +
                  providers.front());
}

bool has_fusor_ops(const Graph& g) {
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n)) {
    if (g.node(n).op.domain() == kFusorDomain) return true;
    for (const Graph* sub : g.subgraphs(n))
      if (has_fusor_ops(*sub)) return true;
  }
  return false;
}

void stamp_optimized(Model& model, const OptimizeOptions& options, const std::string& rule_set_hash) {
  if (options.level == OptLevel::Disabled || options.providers.empty()) return;
  if (has_fusor_ops(*model.graph) && model.opset(kFusorDomain) == 0) model.set_opset(kFusorDomain, kFusorOpsetVersion);
  std::string level = opt_level_name(options.level);
  if (const std::string* old = find_meta(model, kMetaLevel); old && level_rank(*old) > level_rank(level)) level = *old;
  set_meta(model, kMetaProvider, options.providers.front());
  set_meta(model, kMetaProviders, join(options.providers));
  set_meta(model, kMetaLevel, level);
  set_meta(model, kMetaRuleSetHash, rule_set_hash);
  set_meta(model, kMetaVersion, engine_version());
}

}  // namespace fusor
