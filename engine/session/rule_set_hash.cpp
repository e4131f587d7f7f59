#include "engine/session/rule_set_hash.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "dsl/diagnostics.h"
#include "dsl/parser.h"

namespace fusor {

namespace {

class Fnv64 {
 public:
  void part(std::string_view bytes) {
    uint64_t n = bytes.size();
    for (int i = 0; i < 8; ++i) byte(static_cast<unsigned char>(n >> (8 * i)));
    for (char c : bytes) byte(static_cast<unsigned char>(c));
  }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
    return buf;
  }

 private:
  void byte(unsigned char c) {
    h_ ^= c;
    h_ *= 0x100000001b3ULL;
  }
  uint64_t h_ = 0xcbf29ce484222325ULL;
};

std::vector<std::string> provider_files(const OptimizeOptions& o) {
  std::vector<std::string> files;
  for (const std::string& p : o.providers) files.push_back(provider_path(p, o.rules_root));
  return files;
}

// Provider definitions, then the rule files read, then top-level files that could not be read at
// all (they still count).
std::vector<std::string> files_in_hash_order(const OptimizeOptions& o, const std::vector<std::string>& read,
                                             const std::vector<std::string>& top) {
  std::vector<std::string> out = provider_files(o);
  std::vector<std::string> seen = read;
  for (const std::string& f : top)
    if (std::find(seen.begin(), seen.end(), f) == seen.end()) seen.push_back(f);
  out.insert(out.end(), seen.begin(), seen.end());
  return out;
}

std::vector<std::string> top_rule_files(const OptimizeOptions& o) {
  std::vector<std::string> files;
  if (!o.no_default_rules && o.level != OptLevel::Disabled && !o.providers.empty()) {
    try {
      files = default_rule_files(o.level, o.providers.front(), o.rules_root);
    } catch (...) {
      // A bad provider definition: its text is hashed, optimize() reports it.
    }
  }
  for (const std::string& f : o.rule_files) files.push_back(f);
  return files;
}

std::string hash_files(const OptimizeOptions& options, const std::vector<std::string>& files) {
  Fnv64 h;
  h.part("fusor-rule-set-1");
  for (const std::string& path : files) {
    std::string text;
    if (dsl::read_text_file(path, text)) {
      h.part("file");
      h.part(text);
    } else {
      h.part("unreadable");
      h.part(path);
    }
  }
  std::vector<std::string> disabled = options.disabled;
  std::sort(disabled.begin(), disabled.end());
  disabled.erase(std::unique(disabled.begin(), disabled.end()), disabled.end());
  h.part("disable");
  for (const std::string& d : disabled) h.part(d);
  h.part(options.no_default_rules ? "no-default-rules" : "default-rules");
  return h.hex();
}

}  // namespace

std::vector<std::string> rule_set_files(const OptimizeOptions& options) {
  return rule_set_files(options, top_rule_files(options));
}

std::vector<std::string> rule_set_files(const OptimizeOptions& options, const std::vector<std::string>& top) {
  if (top.empty()) return provider_files(options);
  dsl::Diagnostics diags;  // errors are optimize()'s to report
  auto parsed = dsl::parse_rule_files(top, diags);
  std::vector<std::string> read;
  for (const auto& f : parsed)
    if (f) read.push_back(f->path);
  return files_in_hash_order(options, read, top);
}

std::string rule_set_hash(const OptimizeOptions& options) { return rule_set_hash(options, top_rule_files(options)); }

std::string rule_set_hash(const OptimizeOptions& options, const std::vector<std::string>& top_files) {
  return hash_files(options, rule_set_files(options, top_files));
}

std::string rule_set_hash_of_files(const OptimizeOptions& options, const std::vector<std::string>& read,
                                   const std::vector<std::string>& top_files) {
  return hash_files(options, files_in_hash_order(options, read, top_files));
}

}  // namespace fusor
