// fusor explain MODEL --rule NAME [optimize's flags] [--json]: where one rule matched, nearly
// matched, was refused or was skipped for the provider, during the optimization `optimize` runs.
#include <iostream>

#include "cli/command.h"
#include "cli/optimize_flags.h"
#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "engine/session/optimize.h"
#include "core/util/json.h"

namespace fusor::cli {

namespace {

const ExplainKind kKinds[] = {ExplainKind::Applied, ExplainKind::Skipped, ExplainKind::Refused,
                              ExplainKind::Preempted, ExplainKind::NearMiss};

// The JSON array each kind of record goes to.
const char* json_key(ExplainKind k) {
  switch (k) {
    case ExplainKind::Applied: return "applied";
    case ExplainKind::NearMiss: return "near_misses";
    case ExplainKind::Refused: return "refused";
    case ExplainKind::Skipped: return "skipped";
    case ExplainKind::Preempted: return "preempted";
  }
  return "?";
}

json::Value strings(const std::vector<std::string>& v) {
  json::Value a = json::Value::array();
  for (const std::string& s : v) a.push_back(s);
  return a;
}

// A near miss where nothing beyond the root matched: the root's own attributes, arity, inputs or
// literals, or the op of a node feeding it directly. On a rule rooted at a common op (Relu, Add)
// they are at nearly every node of that op and say only "this is not the pattern": the text
// shows them with --all; JSON marks them "trivial".
bool trivial_near_miss(const ExplainRecord& e) {
  if (e.kind != ExplainKind::NearMiss || e.constraint == MissKind::Where || e.constraint == MissKind::OutsideUse)
    return false;
  if (e.at_node.empty() || e.at_node == e.root) return true;
  return e.consumer == e.root && e.constraint == MissKind::Op;
}

json::Value record_json(const ExplainRecord& e) {
  json::Value v = json::Value::object();
  v.set("graph", e.graph);
  v.set("root", e.root);
  v.set("op", e.op);
  v.set("location", e.location);
  v.set("body", e.body);
  v.set("iteration", static_cast<int64_t>(e.iteration));
  switch (e.kind) {
    case ExplainKind::Applied:
      v.set("rewrite_index", static_cast<int64_t>(e.rewrite_index));
      v.set("nodes", strings(e.nodes));
      v.set("new_ops", strings(e.new_ops));
      break;
    case ExplainKind::Skipped:
    case ExplainKind::Refused:
      v.set("nodes", strings(e.nodes));
      v.set("reason", e.reason);
      break;
    case ExplainKind::Preempted:
      v.set("by_rule", e.by_rule);
      v.set("reason", e.reason);
      break;
    case ExplainKind::NearMiss:
      v.set("constraint", miss_kind_name(e.constraint));
      v.set("at_node", e.at_node.empty() ? json::Value() : json::Value(e.at_node));
      v.set("at_op", e.at_op.empty() ? json::Value() : json::Value(e.at_op));
      v.set("at_input", e.at_input < 0 ? json::Value() : json::Value(e.at_input));
      v.set("consumer", e.consumer.empty() ? json::Value() : json::Value(e.consumer));
      v.set("consumer_input", e.consumer_input < 0 ? json::Value() : json::Value(e.consumer_input));
      v.set("reason", e.reason);
      v.set("removed_by", e.by_rule.empty() ? json::Value() : json::Value(e.by_rule));
      v.set("trivial", trivial_near_miss(e));
      break;
  }
  return v;
}

std::string quoted(const std::string& name) { return "'" + name + "'"; }

std::string node_text(const std::string& name, const std::string& op) { return "node " + quoted(name) + " (" + op + ")"; }

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

// "literal constraint failed at input 1", "op constraint failed at node 'sl' (Slice), which feeds
// input 0 of 'rs'": the failing constraint and where it is, relative to the root.
std::string miss_place(const ExplainRecord& e) {
  std::string s = std::string(miss_kind_name(e.constraint)) + " constraint failed";
  if (!e.at_node.empty() && e.at_node != e.root) s += " at " + node_text(e.at_node, e.at_op);
  if (e.at_input >= 0) s += (e.at_node.empty() || e.at_node == e.root ? " at input " : ", input ") + std::to_string(e.at_input);
  if (!e.consumer.empty()) s += ", which feeds input " + std::to_string(e.consumer_input) + " of " + quoted(e.consumer);
  return s;
}

void print_record(std::ostream& out, const ExplainRecord& e, bool show_graph) {
  std::string where = node_text(e.root, e.op) + (show_graph ? " in graph " + quoted(e.graph) : "");
  out << e.location << ": " << explain_kind_name(e.kind) << ": ";
  switch (e.kind) {
    case ExplainKind::Applied:
      out << where << ", iteration " << e.iteration << ", rewrite #" << e.rewrite_index << "\n";
      out << "    matched: " << join(e.nodes) << "\n";
      out << "    created: " << (e.new_ops.empty() ? "nothing (outputs forwarded)" : join(e.new_ops)) << "\n";
      return;
    case ExplainKind::Skipped:
    case ExplainKind::Refused:
      out << where << ", iteration " << e.iteration << "\n";
      out << "    matched: " << join(e.nodes) << "\n";
      out << "    " << (e.kind == ExplainKind::Skipped ? "not run for the provider: " : "refused: ") << e.reason << "\n";
      return;
    case ExplainKind::Preempted:
      out << where << ": " << e.reason << "\n";
      return;
    case ExplainKind::NearMiss:
      out << where << ": " << miss_place(e) << "\n";
      out << "    " << e.reason << "\n";
      if (e.constraint == MissKind::Where && e.reason.find(" is unknown") != std::string::npos)
        out << "    hint: --dim NAME=V and --shape INPUT=AxBxC give symbolic dimensions sizes\n";
      if (!e.by_rule.empty()) out << "    (the node was later rewritten by " << quoted(e.by_rule) << ")\n";
      return;
  }
}

int run_explain(const Args& args) {
  OptimizeFlags flags = parse_optimize_flags(args);
  auto rule = args.get("rule");
  if (!rule || rule->empty()) throw_usage("missing --rule NAME");
  flags.options.explain_rule = *rule;

  LoadOptions load;
  load.overrides = flags.overrides;
  auto model = load_model(args.positional(0), load);
  OptimizeReport report = optimize(*model, flags.options);
  for (const std::string& t : report.trace) std::cerr << "trace: " << t << "\n";
  const ExplainResult& x = report.explain;

  std::string providers;
  for (const std::string& p : flags.options.providers) providers += (providers.empty() ? "" : ",") + p;
  // Near misses at roots that a later match of this same rule consumed say nothing about why the
  // rule did not fire; the text leaves them out (JSON keeps them, with removed_by).
  auto self_consumed = [&](const ExplainRecord& e) {
    return e.kind == ExplainKind::NearMiss && e.by_rule == x.rule;
  };

  if (args.has("json")) {
    json::Value v = json::Value::object();
    v.set("model", model->path);
    v.set("rule", x.rule);
    v.set("locations", strings(x.locations));
    v.set("rule_level", x.level);
    v.set("level", opt_level_name(flags.options.level));
    v.set("providers", providers);
    v.set("ran", x.ran);
    v.set("not_run_reason", x.ran ? json::Value() : json::Value(x.not_run_reason));
    for (ExplainKind k : kKinds) {
      json::Value a = json::Value::array();
      for (const ExplainRecord& e : x.records)
        if (e.kind == k) a.push_back(record_json(e));
      v.set(json_key(k), std::move(a));
    }
    std::cout << v.dump(2) << "\n";
    return kExitOk;
  }

  std::ostream& out = std::cout;
  out << "rule " << quoted(x.rule) << " (" << join(x.locations) << "), level " << x.level << "; " << model->path
      << " at level " << opt_level_name(flags.options.level) << " for " << providers << "\n";
  if (!x.ran) {
    out << "not run: " << x.not_run_reason << "\n";
    return kExitOk;
  }
  bool subgraphs = false;
  for (const ExplainRecord& e : x.records) subgraphs |= e.graph != model->graph->name;
  const bool all = args.has("all");
  int counts[5] = {0, 0, 0, 0, 0};
  int hidden = 0, trivial = 0;
  for (size_t i = 0; i < 5; ++i)
    for (const ExplainRecord& e : x.records) {
      if (e.kind != kKinds[i]) continue;
      if (self_consumed(e)) {
        ++hidden;
        continue;
      }
      if (!all && trivial_near_miss(e)) {
        ++trivial;
        continue;
      }
      ++counts[i];
      print_record(out, e, subgraphs);
    }
  if (x.records.empty()) out << "no node has the rule's root op\n";
  out << "summary: " << counts[0] << " applied, " << counts[1] << " skipped for the provider, " << counts[2]
      << " refused, " << counts[3] << " preempted, " << counts[4] << " near misses";
  if (hidden) out << " (and " << hidden << " at nodes a later match of this rule consumed)";
  if (trivial)
    out << "; " << trivial << " node(s) of the root op matched nothing beyond the root (--all shows them)";
  out << "\n";
  return kExitOk;
}

}  // namespace

Command explain_command() {
  Command c;
  c.name = "explain";
  c.summary = "show where a rule matched, nearly matched or was skipped, and why";
  c.usage = "MODEL --rule NAME [--all] [--level LEVEL] [--provider NAME[,NAME]] [optimization flags] [--json]";
  c.description =
      "Optimizes MODEL as `fusor optimize` would (nothing is written) and reports, for the rule NAME:\n"
      "every match that was applied (root node, matched nodes, FILE:LINE, iteration); every near miss\n"
      "(a node with the rule's root op where matching failed: which constraint failed at which node);\n"
      "matches skipped because the provider's kernels cannot run the result, matches whose rewrite\n"
      "was refused, and nodes a higher-priority rule rewrote first. Near misses where nothing beyond\n"
      "the root matched are counted, and listed with --all. An unknown rule name is a usage error\n"
      "(exit 1) naming the closest rules. --json keys are in docs/cli.md.";
  c.declare = [](ArgParser& p) {
    p.positional("MODEL", "an .onnx file")
        .option("rule", "NAME", "the rule to explain")
        .flag("all", "also list near misses where nothing beyond the root matched")
        .flag("json", "print a JSON report instead of text");
    add_optimize_flags(p);
  };
  c.run = run_explain;
  return c;
}

}  // namespace fusor::cli
