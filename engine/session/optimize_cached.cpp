#include "engine/session/optimize_cached.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "core/util/regular_file.h"
#include "cache/external_refs.h"
#include "cache/hash.h"
#include "cache/image_model.h"
#include "cache/key.h"
#include "cache/payload.h"
#include "cache/store.h"
#include "dsl/provider.h"
#include "core/util/error.h"
#include "engine/session/model_stats.h"
#include "engine/session/optimized_stamp.h"
#include "engine/session/rule_set_hash.h"
#include "engine/session/session_image.h"
#include "core/util/log.h"
#include "core/util/stopwatch.h"

namespace fusor {

namespace {

// A read-only view of a model file's bytes (memory-mapped), or of in-memory bytes, and their hash.
// The file's hash is read through pread (cache/hash.h says why), from the same open file as the
// mapping; the mapping is not populated: on a hit of a remembered file no page is touched, else
// only the pages external_data_locations reads; on a miss the loader parses from it.
class ModelBytes {
 public:
  explicit ModelBytes(const ModelSource& s) {
    if (!s.bytes.empty()) {
      view_ = s.bytes;
      ok_ = true;
      return;
    }
    size_t size = 0;
    fd_ = open_regular_file(s.path, &size, nullptr);  // a FIFO or device: no key (load refuses it)
    if (fd_ < 0) return;
    if (size > 0) {
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd_, 0);
      if (p != MAP_FAILED) {
        map_ = p;
        size_ = size;
        view_ = std::string_view(static_cast<const char*>(p), size_);
        ok_ = true;
      }
    }
  }
  ~ModelBytes() {
    if (map_) ::munmap(map_, size_);
    if (fd_ >= 0) ::close(fd_);
  }
  ModelBytes(const ModelBytes&) = delete;
  ModelBytes& operator=(const ModelBytes&) = delete;
  bool ok() const { return ok_; }
  bool mapped() const { return map_ != nullptr; }
  std::string_view view() const { return view_; }
  // The bytes' XXH3-128 hex and the external-data locations they name; nullopt when the file
  // cannot be read back whole or is not a model external_data_locations can scan. With a store,
  // a file whose stamp the store remembers is not read at all (cache/file_stamp.h says why that
  // is safe), and a settled file's facts are remembered for the next run.
  std::optional<cache::RememberedFile> facts(cache::Store* store = nullptr) const {
    std::optional<cache::FileStamp> stamp = map_ && store ? cache::stamp_of_fd(fd_) : std::nullopt;
    if (stamp && stamp->size == static_cast<int64_t>(size_))
      if (std::optional<cache::RememberedFile> known = store->remembered_file(*stamp)) return known;
    const int64_t now = cache::realtime_ns();
    cache::RememberedFile f;
    auto external = cache::external_data_locations(view_);
    if (!external) return std::nullopt;
    f.external = std::move(*external);
    if (!map_) {
      f.hash = cache::hash_hex(view_);
      return f;
    }
    if (!cache::hash_fd(fd_, size_, f.hash)) return std::nullopt;
    if (stamp && stamp->size == static_cast<int64_t>(size_) && cache::settled(*stamp, now)) {
      // Still the same file after reading it: remember what was read.
      if (std::optional<cache::FileStamp> after = cache::stamp_of_fd(fd_); after && *after == *stamp)
        store->remember_file(*stamp, f);
    }
    return f;
  }

 private:
  int fd_ = -1;
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
// `mapped`: the model file's bytes already mapped for the key (parsed from there: read once).
OptimizedModel load_and_optimize(const ModelSource& source, const ShapeOverrides& overrides,
                                 const OptimizeOptions& options, const ProviderCatalog* providers = nullptr,
                                 const ModelBytes* mapped = nullptr) {
  OptimizedModel r;
  LoadOptions load;
  load.overrides = overrides;
  Stopwatch clock;
  if (source.bytes.empty() && mapped && mapped->mapped())
    r.model = load_model_from_view(mapped->view(), load, source.path, base_dir_of(source));
  else if (source.bytes.empty())
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
// hash: stored with an entry, checked on a hit.
std::vector<std::pair<std::string, std::string>> imported_rule_files(const OptimizeOptions& o, const RuleInputs& in) {
  std::vector<std::pair<std::string, std::string>> deps;
  for (const std::string& f : rule_set_files(o, in.top_files)) {
    if (std::find(in.provider_files.begin(), in.provider_files.end(), f) != in.provider_files.end() ||
        std::find(in.top_files.begin(), in.top_files.end(), f) != in.top_files.end())
      continue;
    std::string hex;
    if (!cache::hash_file(f, hex)) hex = "unreadable";
    deps.emplace_back(f, hex);
  }
  return deps;
}

bool deps_unchanged(const std::vector<std::pair<std::string, std::string>>& deps) {
  for (const auto& [path, hex] : deps) {
    std::string now;
    if (!cache::hash_file(path, now) || now != hex) {
      FUSOR_LOG(Info) << "cache: imported rule file " << path << " changed; rebuilding the entry";
      return false;
    }
  }
  return true;
}

// `store`: where the model file's facts may be remembered (ModelBytes::facts); null: always read.
std::optional<std::string> key_from_bytes(const ModelBytes& model, const ModelSource& source,
                                          const ShapeOverrides& overrides, const OptimizeOptions& options,
                                          const RuleInputs& rules, cache::Store* store = nullptr) {
  std::optional<cache::RememberedFile> facts = model.facts(store);
  if (!facts) return std::nullopt;
  cache::KeyBuilder k;
  k.add("model", facts->hash);
  std::string base = base_dir_of(source);
  for (const std::string& loc : facts->external) {
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
  return key_from_bytes(bytes, source, overrides, options, *rules);
}

namespace {

// A hit: the entry's facts and image, decoded. nullopt (the entry dropped when it is damaged)
// when it cannot be used.
std::optional<OptimizedModel> use_entry(SessionImageState& st, const cache::Fetched& entry, const std::string& name) {
  const std::string short_key = st.key.substr(0, 16);
  cache::SessionFacts facts;
  try {
    facts = cache::decode_facts(entry.info);
  } catch (const std::exception& e) {
    st.store->drop(st.key, entry.payload, std::string("its facts do not decode (") + e.what() + ")");
    return std::nullopt;
  }
  std::optional<cache::ImageRef> ref = cache::decode_image_ref(entry.payload);
  if (!ref) {
    st.store->drop(st.key, entry.payload, "not a session image reference");
    return std::nullopt;
  }
  std::string why;
  auto image = cache::MappedImage::open(st.store->images_dir() + "/" + ref->name, image_identity(),
                                        cache::ImageCheck::Structure, &why);
  if (!image) {
    // Missing: another process evicted it after we read the entry (or someone removed it).
    st.store->drop(st.key, entry.payload, "session image " + ref->name + " " + why);
    return std::nullopt;
  }
  cache::DecodedImage d;
  try {
    d = cache::decode_image(image, name);
  } catch (const Error& e) {
    st.store->drop(st.key, entry.payload, std::string("session image does not decode (") + e.what() + ")");
    return std::nullopt;
  }
  if (!deps_unchanged(facts.deps)) return std::nullopt;
  OptimizedModel r;
  r.model = std::move(d.model);
  r.report.rules_fired = std::move(facts.rules_fired);
  if (auto stamp = read_stamp(*r.model)) r.report.rule_set_hash = stamp->rule_set_hash;
  r.nodes_before = facts.nodes_before;
  r.ops_before = std::move(facts.ops_before);
  st.image = std::move(image);
  st.plan = std::move(d.plan);
  return r;
}

}  // namespace

OptimizedModel load_optimized(const ModelSource& source, const ShapeOverrides& overrides,
                              const OptimizeOptions& options, const CacheOptions& cache_opts, bool store_now) {
  if (!cache_opts.enabled || options.trace)
    return load_and_optimize(source, overrides, options);
  std::string path = cache_opts.path.empty() ? cache::default_cache_path() : cache_opts.path;
  if (path.empty()) {
    FUSOR_LOG(Info) << "cache: neither XDG_CACHE_HOME nor HOME is set; running without the cache";
    return load_and_optimize(source, overrides, options);
  }
  for (const std::string& p : options.providers) check_provider(p);  // a usage error, before any cache work

  Stopwatch clock;
  CacheTimes times;
  // The store first: it may remember the model file's hash, which spares reading the whole file.
  std::unique_ptr<cache::Store> store = cache::Store::open(path);
  times.open_ms = clock.ms();
  clock.reset();
  std::optional<RuleInputs> rules = rule_inputs(options);
  if (!rules) return load_and_optimize(source, overrides, options);
  ModelBytes bytes(source);  // kept: a miss parses these same bytes
  std::optional<std::string> key;
  if (bytes.ok()) key = key_from_bytes(bytes, source, overrides, options, *rules, store.get());
  times.key_ms = clock.ms();
  if (!key || !store) return load_and_optimize(source, overrides, options, &*rules->providers, &bytes);
  clock.reset();
  auto st = std::make_shared<SessionImageState>();
  st->store = std::move(store);
  st->key = *key;
  st->model_name = display_name(source);
  const int64_t bound = cache_opts.max_bytes > 0 ? cache_opts.max_bytes : cache::default_max_bytes();
  st->meta = {st->model_name, joined(options.providers, ","), opt_level_name(options.level)};
  st->max_bytes = bound;

  if (auto entry = st->store->get(*key)) {
    times.open_ms += clock.ms();
    clock.reset();
    st->info = entry->info;  // a hit whose image has no plan for this session stores one with the same facts
    if (std::optional<OptimizedModel> hit = use_entry(*st, *entry, st->model_name)) {
      OptimizedModel r = std::move(*hit);
      times.map_ms = clock.ms();
      r.times = times;
      r.load_ms = times.key_ms + times.open_ms + times.map_ms;
      r.optimize_ms = 0;
      r.cache = "hit";
      r.image = std::move(st);
      FUSOR_LOG(Info) << "cache hit " << key->substr(0, 16) << " in " << path << ": key " << times.key_ms
                      << " ms, open " << times.open_ms << " ms, map " << times.map_ms << " ms";
      return r;
    }
  }
  double lookup_ms = clock.ms();

  OptimizedModel r = load_and_optimize(source, overrides, options, &*rules->providers, &bytes);
  clock.reset();
  const int64_t weights = model_stats(*r.model).initializer_bytes;
  if (weights >= bound) {
    FUSOR_LOG(Info) << "cache: " << weights << " bytes of weights exceed the bound; not stored";
  } else {
    try {
      // The session runs the image form of the model, as a hit will: values numbered densely,
      // nodes in the same order; the tensors still live in the loaded model's memory.
      cache::ImageDataBuilder data;
      std::string meta = cache::encode_image_meta(*r.model, nullptr, data);
      // The decoded tensors keep `owner` alive, which takes the loaded model once decoding worked.
      auto owner = std::make_shared<std::unique_ptr<Model>>();
      cache::DecodedImage d = cache::decode_image(meta, data, owner, st->model_name);
      d.model->path = r.model->path;
      *owner = std::exchange(r.model, std::move(d.model));
      cache::SessionFacts facts{r.report.rules_fired, r.nodes_before, r.ops_before,
                                imported_rule_files(options, *rules)};
      st->info = cache::encode_facts(facts);
      st->needs_store = true;
      if (store_now) {
        Stopwatch store_clock;
        store_session_image(*st, *r.model, nullptr, "", nullptr, nullptr);
        times.store_ms = store_clock.ms();
      }
      r.image = std::move(st);
    } catch (const Error& e) {
      FUSOR_LOG(Warn) << "cache " << path << ": the optimized model was not stored: " << e.what();
    }
  }
  // Keying, looking up and storing are part of what a miss costs.
  times.open_ms += lookup_ms;
  r.times = times;
  r.load_ms += times.key_ms;
  r.optimize_ms += times.open_ms + clock.ms();
  r.cache = "miss";
  return r;
}

}  // namespace fusor
