#include "engine/session/optimize_cached.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "core/util/regular_file.h"
#include "cache/external_refs.h"
#include "cache/hash.h"
#include "cache/key.h"
#include "cache/payload.h"
#include "cache/store.h"
#include "dsl/provider.h"
#include "core/util/error.h"
#include "engine/session/model_stats.h"
#include "engine/session/optimized_stamp.h"
#include "engine/session/rule_set_hash.h"
#include "core/util/log.h"
#include "core/util/stopwatch.h"

namespace fusor {

namespace {

// A read-only view of a model file's bytes (memory-mapped), or of in-memory bytes.
class ModelBytes {
 public:
  explicit ModelBytes(const ModelSource& s) {
    if (!s.bytes.empty()) {
      view_ = s.bytes;
      ok_ = true;
      return;
    }
    size_t size = 0;
    int fd = open_regular_file(s.path, &size, nullptr);  // a FIFO or device: no key (load refuses it)
    if (fd < 0) return;
    if (size > 0) {
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p != MAP_FAILED) {
        map_ = p;
        size_ = size;
        view_ = std::string_view(static_cast<const char*>(p), size_);
        ok_ = true;
      }
    }
    ::close(fd);
  }
  ~ModelBytes() {
    if (map_) ::munmap(map_, size_);
  }
  ModelBytes(const ModelBytes&) = delete;
  ModelBytes& operator=(const ModelBytes&) = delete;
  bool ok() const { return ok_; }
  std::string_view view() const { return view_; }

 private:
  void* map_ = nullptr;
  size_t size_ = 0;
  std::string_view view_;
  bool ok_ = false;
};

std::string base_dir_of(const ModelSource& s) {
  if (!s.bytes.empty()) return s.base_dir.empty() ? "." : s.base_dir;
  std::string dir = std::filesystem::path(s.path).parent_path().string();
  return dir.empty() ? "." : dir;
}

std::string display_name(const ModelSource& s) {
  if (s.bytes.empty()) return s.path;
  return s.name.empty() ? "<bytes>" : s.name;
}

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string engine_identity() {
  return std::string(engine_version()) + " " + cache::build_identity();
}

// `providers`: the catalog already loaded for the key (null: optimize() loads it).
OptimizedModel load_and_optimize(const ModelSource& source, const ShapeOverrides& overrides,
                                 const OptimizeOptions& options, const ProviderCatalog* providers = nullptr) {
  OptimizedModel r;
  LoadOptions load;
  load.overrides = overrides;
  Stopwatch clock;
  if (source.bytes.empty())
    r.model = load_model(source.path, load);
  else
    r.model = load_model_from_bytes(source.bytes, load, display_name(source), base_dir_of(source));
  r.load_ms = clock.ms();
  r.nodes_before = static_cast<int64_t>(r.model->graph->num_nodes());
  r.ops_before = op_histogram(*r.model);
  clock.reset();
  r.report = providers ? optimize(*r.model, options, *providers) : optimize(*r.model, options);
  r.optimize_ms = clock.ms();
  return r;
}

// The files whose texts go into the key without parsing any rule file: every provider
// definition of the list, and the rule files named directly (the first provider's files for the
// level, then --rules). Files they import are checked per entry instead (RuleDeps). nullopt when
// a provider definition does not load: optimize() reports that.
struct RuleInputs {
  std::vector<std::string> provider_files, top_files;
  std::optional<ProviderCatalog> providers;  // loaded once, for the key and for optimize() on a miss
};

std::optional<RuleInputs> rule_inputs(const OptimizeOptions& o) {
  RuleInputs in;
  for (const std::string& p : o.providers) in.provider_files.push_back(provider_path(p, o.rules_root));
  dsl::Diagnostics diags;  // optimize() reports a bad definition itself
  in.providers = ProviderCatalog::load(o.providers, o.rules_root, diags);
  if (diags.has_errors()) return std::nullopt;
  if (!o.no_default_rules && o.level != OptLevel::Disabled && !o.providers.empty())
    in.top_files = in.providers->first().def->rule_files(o.level);
  for (const std::string& f : o.rule_files) in.top_files.push_back(f);
  return in;
}

// The files the rule files import (rule_set_files() minus the ones the key hashed), with their
// SHA-256: stored with an entry, checked on a hit.
std::vector<std::pair<std::string, std::string>> imported_rule_files(const OptimizeOptions& o, const RuleInputs& in) {
  std::vector<std::pair<std::string, std::string>> deps;
  for (const std::string& f : rule_set_files(o, in.top_files)) {
    if (std::find(in.provider_files.begin(), in.provider_files.end(), f) != in.provider_files.end() ||
        std::find(in.top_files.begin(), in.top_files.end(), f) != in.top_files.end())
      continue;
    std::string hex;
    if (!cache::sha256_file(f, hex)) hex = "unreadable";
    deps.emplace_back(f, hex);
  }
  return deps;
}

bool deps_unchanged(const std::vector<std::pair<std::string, std::string>>& deps) {
  for (const auto& [path, hex] : deps) {
    std::string now;
    if (!cache::sha256_file(path, now) || now != hex) {
      FUSOR_LOG(Info) << "cache: imported rule file " << path << " changed; rebuilding the entry";
      return false;
    }
  }
  return true;
}

std::optional<std::string> key_from_bytes(std::string_view bytes, const ModelSource& source,
                                          const ShapeOverrides& overrides, const OptimizeOptions& options,
                                          const RuleInputs& rules) {
  auto externals = cache::external_data_locations(bytes);
  if (!externals) return std::nullopt;
  cache::KeyBuilder k;
  k.add("model", cache::sha256_hex(bytes));
  std::string base = base_dir_of(source);
  for (const std::string& loc : *externals) {
    k.add("external", loc);
    k.add_file("external-bytes", base + "/" + loc);
  }
  k.add("providers", joined(options.providers, ","));
  k.add("level", opt_level_name(options.level));
  for (const std::string& f : rules.provider_files) k.add_file("provider-text", f);
  for (const std::string& f : rules.top_files) k.add_file("rules-text", f);
  std::vector<std::string> disabled = options.disabled;
  std::sort(disabled.begin(), disabled.end());
  disabled.erase(std::unique(disabled.begin(), disabled.end()), disabled.end());
  k.add("disable", joined(disabled, "\n"));
  k.add("no-default-rules", options.no_default_rules ? "1" : "0");
  std::vector<std::string> dims, shapes;
  for (const auto& [name, v] : overrides.dims) dims.push_back(name + "=" + std::to_string(v));
  for (const auto& [name, shape] : overrides.shapes) {
    std::string s = name + "=";
    for (int64_t d : shape) s += std::to_string(d) + "x";
    shapes.push_back(s);
  }
  std::sort(dims.begin(), dims.end());
  std::sort(shapes.begin(), shapes.end());
  k.add("dims", joined(dims, "\n"));
  k.add("shapes", joined(shapes, "\n"));
  k.add("engine", engine_identity());
  k.add("cpu", cache::cpu_features());
  return k.finish();
}

}  // namespace

std::optional<std::string> optimized_cache_key(const ModelSource& source, const ShapeOverrides& overrides,
                                               const OptimizeOptions& options) {
  if (options.trace) return std::nullopt;
  ModelBytes bytes(source);
  if (!bytes.ok()) return std::nullopt;
  std::optional<RuleInputs> rules = rule_inputs(options);
  if (!rules) return std::nullopt;
  return key_from_bytes(bytes.view(), source, overrides, options, *rules);
}

OptimizedModel load_optimized(const ModelSource& source, const ShapeOverrides& overrides,
                              const OptimizeOptions& options, const CacheOptions& cache_opts) {
  if (!cache_opts.enabled || options.trace)
    return load_and_optimize(source, overrides, options);
  std::string path = cache_opts.path.empty() ? cache::default_cache_path() : cache_opts.path;
  if (path.empty()) {
    FUSOR_LOG(Info) << "cache: neither XDG_CACHE_HOME nor HOME is set; running without the cache";
    return load_and_optimize(source, overrides, options);
  }
  for (const std::string& p : options.providers) check_provider(p);  // a usage error, before any cache work

  Stopwatch clock;
  std::optional<RuleInputs> rules = rule_inputs(options);
  if (!rules) return load_and_optimize(source, overrides, options);
  std::optional<std::string> key;
  {
    ModelBytes bytes(source);
    if (bytes.ok()) key = key_from_bytes(bytes.view(), source, overrides, options, *rules);
  }
  double key_ms = clock.ms();
  if (!key) return load_and_optimize(source, overrides, options);
  clock.reset();
  std::unique_ptr<cache::Store> store = cache::Store::open(path);
  if (!store) return load_and_optimize(source, overrides, options);
  double open_ms = clock.ms();

  if (auto entry = store->get(*key)) {
    double fetch_ms = clock.ms() - open_ms;
    std::optional<cache::Decoded> d;
    try {
      d = cache::decode_entry(entry->info, std::move(entry->payload), display_name(source));
    } catch (const Error& e) {
      FUSOR_LOG(Warn) << "cache " << path << ": entry " << key->substr(0, 16) << " does not decode (" << e.what()
                      << "); rebuilding it";
    }
    if (d && deps_unchanged(d->facts.deps)) {
      OptimizedModel r;
      r.model = std::move(d->model);
      r.report.rules_fired = std::move(d->facts.rules_fired);
      if (auto stamp = read_stamp(*r.model)) r.report.rule_set_hash = stamp->rule_set_hash;
      r.nodes_before = d->facts.nodes_before;
      r.ops_before = std::move(d->facts.ops_before);
      r.load_ms = key_ms;
      r.optimize_ms = clock.ms();
      r.cache = "hit";
      FUSOR_LOG(Info) << "cache hit " << key->substr(0, 16) << " in " << path << ": key " << key_ms << " ms, open "
                      << open_ms << " ms, fetch " << fetch_ms << " ms, decode " << (r.optimize_ms - open_ms - fetch_ms)
                      << " ms";
      return r;
    }
  }
  double lookup_ms = clock.ms();

  OptimizedModel r = load_and_optimize(source, overrides, options, &*rules->providers);
  clock.reset();
  try {
    const int64_t bound = cache_opts.max_bytes > 0 ? cache_opts.max_bytes : cache::default_max_bytes();
    // Weights alone over the bound (or protobuf's 2 GB limit): not worth serializing to find out.
    constexpr int64_t kProtoLimit = (int64_t{1} << 31) - (int64_t{64} << 20);
    const int64_t weights = model_stats(*r.model).initializer_bytes;
    if (weights >= bound || weights >= kProtoLimit) {
      FUSOR_LOG(Info) << "cache: " << weights << " bytes of weights exceed the bound; not stored";
    } else {
      cache::SessionFacts facts{r.report.rules_fired, r.nodes_before, r.ops_before,
                                imported_rule_files(options, *rules)};
      cache::Encoded e = cache::encode_entry(*r.model, facts);
      cache::EntryMeta meta{display_name(source), joined(options.providers, ","), opt_level_name(options.level)};
      store->put(*key, meta, e.info, e.payload, bound);
    }
  } catch (const Error& e) {
    FUSOR_LOG(Warn) << "cache " << path << ": the optimized model was not stored: " << e.what();
  }
  // Keying, looking up and storing are part of what a miss costs.
  r.load_ms += key_ms;
  r.optimize_ms += lookup_ms + clock.ms();
  r.cache = "miss";
  return r;
}

}  // namespace fusor
