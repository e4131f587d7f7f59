#include "engine/session/rule_cache.h"

#include <deque>
#include <mutex>
#include <utility>

#include "core/util/error.h"
#include "core/util/log.h"
#include "dsl/lower.h"
#include "dsl/parser.h"
#include "dsl/rules.h"

namespace fusor {

namespace {

struct Entry {
  std::vector<std::string> top;  // the files asked for
  OptLevel level;
  std::string provider;
  std::vector<std::pair<std::string, std::string>> texts;  // (path, bytes) of every file read
  std::shared_ptr<const LoadedRuleSet> loaded;
};

constexpr size_t kMaxEntries = 8;

struct Cache {
  std::mutex mu;
  std::deque<Entry> entries;
  RuleCacheStats stats;
};

Cache& cache() {
  static Cache c;
  return c;
}

bool unchanged(const Entry& e) {
  std::string text;
  for (const auto& [path, bytes] : e.texts) {
    if (!dsl::read_text_file(path, text) || text != bytes) return false;
  }
  return true;
}

[[noreturn]] void fail_with(const dsl::Diagnostics& diags) {
  throw_bad_input(diags.error_text("rules: ", "rule files"));
}

}  // namespace

std::shared_ptr<const LoadedRuleSet> load_rule_set(const std::vector<std::string>& files, OptLevel level,
                                                   const std::string& provider) {
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    for (const Entry& e : c.entries) {
      if (e.top == files && e.level == level && e.provider == provider && unchanged(e)) {
        ++c.stats.hits;
        if (!e.loaded->warnings.empty()) {
          FUSOR_LOG(Warn) << "rule files:\n" << e.loaded->warnings;
        }
        return e.loaded;
      }
    }
  }
  auto loaded = std::make_shared<LoadedRuleSet>();
  Entry entry{files, level, provider, {}, nullptr};
  if (!files.empty()) {
    dsl::CheckOptions copts;
    // Rules are checked at the newest opset whatever the model's (docs/rules-reference.md, "Checks"):
    // they are written in the newest form, the matcher lifts older forms and rewrites are
    // re-expressed in the model's opset; `opset()` guards read the model's. Checking at the model's
    // opset rejected the shipped basic rules for opset-11 models (PaddleOCR det).
    copts.opset = 0;
    dsl::Diagnostics diags;
    dsl::RuleSet set = dsl::load_rules(files, copts, diags);
    if (diags.has_errors()) fail_with(diags);
    loaded->rules = lower_rules(set.select(level, provider), diags);
    if (diags.has_errors()) fail_with(diags);
    if (!diags.empty()) loaded->warnings = diags.str();
    for (const auto& f : set.files) {
      if (!f) continue;
      loaded->files.push_back(f->path);
      entry.texts.emplace_back(f->path, f->source);
    }
  }
  if (!loaded->warnings.empty()) {
    FUSOR_LOG(Warn) << "rule files:\n" << loaded->warnings;
  }
  entry.loaded = loaded;
  std::lock_guard<std::mutex> lock(c.mu);
  ++c.stats.misses;
  c.entries.push_back(std::move(entry));
  if (c.entries.size() > kMaxEntries) c.entries.pop_front();
  return loaded;
}

RuleCacheStats rule_cache_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.stats;
}

}  // namespace fusor
