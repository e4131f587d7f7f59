#include "cli/optimize_flags.h"

#include "core/util/error.h"

namespace fusor::cli {

void add_shape_flags(ArgParser& p) {
  p.section("shape flags")
      .option("dim", "NAME=V", "give the symbolic dimension NAME the value V in every input", true)
      .option("shape", "INPUT=AxBxC", "give input INPUT this static shape, e.g. input=1x3x224x224", true);
}

ShapeOverrides parse_shape_flags(const Args& args) {
  // A name given twice keeps its last value, as a later flag overrides an earlier one.
  auto put = [](auto& list, auto entry) {
    for (auto& e : list)
      if (e.first == entry.first) { e.second = std::move(entry.second); return; }
    list.push_back(std::move(entry));
  };
  ShapeOverrides o;
  for (const std::string& d : args.all("dim")) put(o.dims, parse_dim_override(d));
  for (const std::string& s : args.all("shape")) put(o.shapes, parse_shape_override(s));
  return o;
}

void add_optimize_flags(ArgParser& p, OptLevel default_level) {
  std::string providers;
  for (const std::string& n : known_providers()) providers += (providers.empty() ? "" : ", ") + n;
  p.section("optimization flags")
      .option("level", "LEVEL",
              opt_level_names() + " (default " + opt_level_name(default_level) +
                  ")")
      .option("provider", "NAME[,NAME]", "execution providers in priority order (known: " + providers +
                                              "; default cpu)")
      .option("rules", "FILE", "load this rule file too", true)
      .flag("no-default-rules", "do not load the provider's shipped rule files")
      .option("disable", "NAME[,NAME]", "skip these rules or built-in passes", true)
      .flag("trace", "print every rewrite (rule, FILE:LINE, nodes) on stderr (runs with the cache off)");
  add_shape_flags(p);
  p.section("cache flags")
      .option("cache", "FILE", "the optimized-session cache (default $XDG_CACHE_HOME/fusor/cache.db)")
      .flag("no-cache", "neither read nor write the cache")
      .option("cache-max-mb", "N", "evict least-recently-used entries beyond N MB (default $FUSOR_CACHE_MAX_MB or 1024)");
}

OptimizeFlags parse_optimize_flags(const Args& args, OptLevel default_level) {
  OptimizeFlags f;
  f.options.level = default_level;
  if (auto level = args.get("level")) f.options.level = parse_opt_level(*level);
  if (auto providers = args.get("provider")) {
    f.options.providers.clear();
    for (const std::string& name : split_list(*providers)) {
      if (name.empty()) throw_usage("--provider: empty provider name in '" + *providers + "'");
      check_provider(name);
      f.options.providers.push_back(name);
    }
  }
  for (const std::string& r : args.all("rules")) f.options.rule_files.push_back(r);
  f.options.no_default_rules = args.has("no-default-rules");
  for (const std::string& d : args.all("disable"))
    for (const std::string& name : split_list(d))
      if (!name.empty()) f.options.disabled.push_back(name);
  f.options.trace = args.has("trace");
  f.overrides = parse_shape_flags(args);
  f.cache.enabled = !args.has("no-cache");
  if (auto c = args.get("cache")) {
    if (c->empty()) throw_usage("--cache: expected a file name");
    f.cache.path = *c;
  }
  if (args.has("cache-max-mb")) f.cache.max_bytes = args.get_int("cache-max-mb", 0, 1, int64_t{1} << 30) << 20;
  return f;
}

}  // namespace fusor::cli
