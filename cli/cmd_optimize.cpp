// fusor optimize MODEL [-o OUT.onnx] [--level L] [--provider P] [--dim ...] [--shape ...] [--json]
// (without -o: a dry run that reports what fired and writes nothing)
#include <iostream>

#include "cli/command.h"
#include "cli/optimize_flags.h"
#include "cli/report.h"
#include "engine/session/partition.h"
#include "engine/session/transpose_report.h"
#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "engine/session/model_stats.h"
#include "engine/session/optimize.h"
#include "engine/session/optimize_cached.h"
#include "core/util/log.h"
#include "core/util/stopwatch.h"

namespace fusor::cli {

namespace {

int64_t top_level_nodes(const Model& m) { return static_cast<int64_t>(m.graph->num_nodes()); }

int run_optimize(const Args& args) {
  OptimizeFlags flags = parse_optimize_flags(args);
  // Without -o: a dry run, the same report with nothing written.
  auto out_path = args.get("output");

  OptimizedModel loaded =
      load_optimized(ModelSource::file(args.positional(0)), flags.overrides, flags.options, flags.cache);
  std::unique_ptr<Model> model = std::move(loaded.model);
  const OptimizeReport& report = loaded.report;
  double load_ms = loaded.load_ms, optimize_ms = loaded.optimize_ms;
  int64_t nodes_before = loaded.nodes_before;
  const auto& ops_before = loaded.ops_before;
  FUSOR_LOG(Info) << "loaded " << model->path << " in " << ms_text(load_ms) << " (cache " << loaded.cache << ")";
  for (const std::string& t : report.trace) std::cerr << "trace: " << t << "\n";

  Stopwatch clock;
  if (out_path) save_model(*model, *out_path);
  double save_ms = clock.ms();
  int64_t nodes_after = top_level_nodes(*model);
  auto ops_after = op_histogram(*model);

  std::string providers;
  for (const std::string& p : flags.options.providers) providers += (providers.empty() ? "" : ",") + p;
  // Nodes per provider (partitioning, engine/session/partition.h); a cache hit skipped optimize().
  const std::map<std::string, int64_t> provider_nodes =
      partition_model(*model, ProviderCatalog::load_or_throw(flags.options.providers, flags.options.rules_root), false)
          .nodes_per_provider;
  if (args.has("json")) {
    json::Value v = json::Value::object();
    v.set("model", model->path);
    v.set("output", out_path ? json::Value(*out_path) : json::Value());  // null: a dry run
    v.set("level", opt_level_name(flags.options.level));
    v.set("providers", providers);
    v.set("nodes_before", nodes_before);
    v.set("nodes_after", nodes_after);
    v.set("ops_before", json::Value(ops_before));
    v.set("ops_after", json::Value(ops_after));
    v.set("rules_fired", json::Value(report.rules_fired));
    v.set("provider_nodes", json::Value(provider_nodes));
    // Transposes before, inserted by the layout rules, cancelled, and each one left with the op
    // that blocked it (engine/session/transpose_report.h). A cache hit has no rules_fired: no
    // insertion count then.
    auto tb = ops_before.find("Transpose");
    TransposeReport tr = transpose_report(*model, tb == ops_before.end() ? 0 : tb->second, report.rules_fired);
    json::Value t = json::Value::object();
    t.set("before", tr.before);
    t.set("inserted", tr.inserted);
    t.set("cancelled", tr.cancelled);
    t.set("left", tr.left);
    json::Value left = json::Value::array();
    for (const TransposeLeft& l : tr.details) {
      json::Value e = json::Value::object();
      e.set("node", l.node);
      e.set("reason", l.reason);
      left.push_back(std::move(e));
    }
    t.set("left_details", std::move(left));
    v.set("transposes", std::move(t));
    v.set("load_ms", round_ms(load_ms));
    v.set("optimize_ms", round_ms(optimize_ms));
    v.set("save_ms", round_ms(save_ms));
    v.set("cache", loaded.cache);
    std::cout << v.dump(2) << "\n";
    return kExitOk;
  }
  std::ostream& out = std::cout;
  out << "loaded    " << model->path << " in " << ms_text(load_ms) << "\n";
  out << "optimized at level " << opt_level_name(flags.options.level) << " for " << providers << " in "
      << ms_text(optimize_ms) << (loaded.cache == "hit" ? " (from the cache)" : "") << "\n";
  if (out_path)
    out << "saved     " << *out_path << " in " << ms_text(save_ms) << "\n";
  else
    out << "saved     nothing (no -o: a dry run)\n";
  out << "nodes:    " << nodes_before << " -> " << nodes_after << "\n";
  out << "providers:";
  for (const auto& [p, n] : provider_nodes) out << " " << p << " " << n << " node(s)";
  out << "\n";
  out << "rules fired:";
  if (report.rules_fired.empty()) {
    out << " none\n";
  } else {
    out << "\n";
    print_histogram(out, report.rules_fired);
  }
  out << "op histogram (all depths):\n";
  print_histogram_diff(out, ops_before, ops_after);
  return kExitOk;
}

}  // namespace

Command optimize_command() {
  Command c;
  c.name = "optimize";
  c.summary = "optimize a model at a level for providers and save it";
  c.usage = "MODEL [-o OUT.onnx] [--level LEVEL] [--provider NAME[,NAME]] [--dim ...] [--shape ...] [--json]\n"
            "          [--cache FILE | --no-cache]";
  c.description =
      "Loads MODEL, rewrites it at the given level for the given providers, and saves the result\n"
      "(without -o, a dry run: the same report, nothing written).\n"
      "Prints node counts before and after, the rules that fired and the op histogram; --json\n"
      "prints the same as a JSON report (keys in docs/cli.md).";
  c.declare = [](ArgParser& p) {
    p.positional("MODEL", "an .onnx file")
        .option("output", "OUT.onnx", "where to write the optimized model (none: a dry run)", false, 'o')
        .flag("json", "print a JSON report instead of text");
    add_optimize_flags(p);
  };
  c.run = run_optimize;
  return c;
}

}  // namespace fusor::cli
