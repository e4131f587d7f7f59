// fusor inspect MODEL [--json] [--arena] [--dot OUT.dot] [--svg OUT.svg] [--compare ORIGINAL]
//                     [--dim ...] [--shape ...]
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/command.h"
#include "cli/optimize_flags.h"
#include "cli/report.h"
#include "engine/exec/executor.h"
#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "core/util/log.h"
#include "engine/rewrite/provenance.h"
#include "engine/session/arena_report.h"
#include "engine/session/dot.h"
#include "engine/session/inputs.h"
#include "engine/session/model_stats.h"
#include "engine/session/optimized_stamp.h"

namespace fusor::cli {

namespace {

// Nodes a rule made (their doc_string carries provenance), in graph order, each graph's nodes
// before those of the subgraphs its nodes hold; `depth` 0 is the main graph.
void collect_fused(const Graph& g, int depth, json::Value& list) {
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id)) {
    const Node& n = g.node(id);
    auto p = parse_provenance(n.doc_string);
    if (!p) continue;
    json::Value v = json::Value::object();
    v.set("name", n.name);
    v.set("op", n.op.qualified());
    v.set("rule", p->rule);
    json::Value replaced = json::Value::array();
    for (const auto& r : p->replaced) replaced.push_back(r);
    v.set("replaced", std::move(replaced));
    json::Value via = json::Value::array();
    for (const auto& r : p->via) via.push_back(r);
    v.set("via", std::move(via));
    v.set("depth", depth);
    list.push_back(std::move(v));
  }
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id))
    for (const Graph* sub : g.subgraphs(id)) collect_fused(*sub, depth + 1, list);
}

json::Value fused_nodes_json(const Graph& g) {
  json::Value list = json::Value::array();
  collect_fused(g, 0, list);
  return list;
}

json::Value stamp_json(const Model& model) {
  auto s = read_stamp(model);
  if (!s) return nullptr;
  json::Value v = json::Value::object();
  v.set("provider", s->provider);
  v.set("providers", s->providers);
  v.set("level", s->level);
  v.set("rule_set_hash", s->rule_set_hash);
  v.set("version", s->version);
  return v;
}

json::Value inspect_json(const Model& model, const ModelStats& s) {
  json::Value v = json::Value::object();
  v.set("model", model.path);
  v.set("ir_version", model.ir_version);
  v.set("producer", model.producer_name + (model.producer_version.empty() ? "" : " " + model.producer_version));
  v.set("opsets", opsets_json(s.opsets));
  v.set("nodes", s.nodes);
  v.set("subgraph_nodes", s.subgraph_nodes);
  v.set("constant_nodes", s.constant_nodes);
  v.set("ops", json::Value(s.ops));
  json::Value inputs = json::Value::array(), outputs = json::Value::array();
  for (const IoStats& io : s.inputs) inputs.push_back(io_json(io));
  for (const IoStats& io : s.outputs) outputs.push_back(io_json(io));
  v.set("inputs", std::move(inputs));
  v.set("outputs", std::move(outputs));
  v.set("initializers", s.initializers);
  v.set("initializer_bytes", s.initializer_bytes);
  v.set("optimized", stamp_json(model));
  v.set("fused_nodes", fused_nodes_json(*model.graph));
  return v;
}

void print_io(std::ostream& out, const char* title, const std::vector<IoStats>& ios) {
  out << title << ":\n";
  size_t w = 0;
  for (const IoStats& io : ios) w = std::max(w, io.name.size());
  for (const IoStats& io : ios) {
    std::string name = io.name;
    name.append(w + 2 - name.size(), ' ');
    out << "  " << name << io.type << " " << shape_text(io) << "\n";
  }
}

void print_fused(std::ostream& out, const json::Value& fused, const json::Value& stamp) {
  if (!stamp.is_null())
    out << "optimized:    by fusor " << stamp["version"].as_string() << " for " << stamp["provider"].as_string()
        << " at level " << stamp["level"].as_string() << " (rule set " << stamp["rule_set_hash"].as_string() << ")\n";
  if (fused.size() == 0) return;
  out << "fused nodes (" << fused.size() << "):\n";
  for (const json::Value& f : fused.as_array()) {
    out << "  " << f["name"].as_string() << "  " << f["op"].as_string() << "  rule " << f["rule"].as_string() << " <-";
    for (const json::Value& r : f["replaced"].as_array()) out << " " << r.as_string();
    out << "\n";
  }
}

void print_text(std::ostream& out, const Model& model, const ModelStats& s) {
  out << "model:        " << model.path << "\n";
  out << "producer:     " << (model.producer_name.empty() ? "-" : model.producer_name)
      << (model.producer_version.empty() ? "" : " " + model.producer_version) << " (ir_version "
      << model.ir_version << ")\n";
  out << "opsets:      ";
  for (const OpsetImport& o : s.opsets) out << " " << (o.domain.empty() ? "ai.onnx" : o.domain) << " " << o.version;
  out << "\n";
  out << "nodes:        " << s.nodes << " top-level, " << s.subgraph_nodes << " in subgraphs, "
      << s.constant_nodes << " Constant\n";
  out << "initializers: " << s.initializers << " tensors, " << bytes_text(s.initializer_bytes) << "\n";
  print_io(out, "inputs", s.inputs);
  print_io(out, "outputs", s.outputs);
  out << "ops (all depths):\n";
  print_histogram(out, s.ops);
  print_fused(out, fused_nodes_json(*model.graph), stamp_json(model));
}

void print_arena(std::ostream& out, const json::Value& a) {
  out << "memory plan:  " << a["steps"].as_int() << " steps, " << a["tensors"].size() << " tensors in the arena\n";
  out << "  peak " << bytes_text(a["peak_bytes"].as_int()) << " against " << bytes_text(a["no_reuse_bytes"].as_int())
      << " without reuse, " << a["buffers"].as_int() << " buffers, " << a["inplace"].as_int() << " in place, scratch "
      << bytes_text(a["scratch_bytes"].as_int()) << "\n";
}

void write_text_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw_bad_input(path + ": cannot write the file");
}

bool have_graphviz() {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    std::error_code ec;
    if (!dir.empty() && std::filesystem::exists(dir + "/dot", ec)) return true;
    start = end + 1;
  }
  return false;
}

// Quotes an argument for /bin/sh.
std::string sh_quote(const std::string& s) {
  std::string o = "'";
  for (char c : s) o += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return o + "'";
}

void write_drawings(const Args& args, const Model& model, const ShapeOverrides& overrides) {
  auto dot_path = args.get("dot");
  auto svg_path = args.get("svg");
  auto original = args.get("compare");
  if (!dot_path && !svg_path) {
    if (original) throw_usage("--compare needs --dot OUT.dot or --svg OUT.svg");
    return;
  }
  if (svg_path && !have_graphviz())
    throw_bad_input("--svg needs Graphviz's `dot`, which is not installed (apt-get install graphviz); --dot " +
                    (dot_path ? *dot_path : std::string("OUT.dot")) + " writes the graph without it");
  std::string text;
  if (original) {
    LoadOptions load;
    load.overrides = overrides;
    auto before = load_model(*original, load);
    text = compare_dot(*before, "before: " + *original, model, "after: " + model.path);
  } else {
    text = model_dot(model, model.path);
  }
  std::string dot_file = dot_path ? *dot_path : *svg_path + ".dot";
  write_text_file(dot_file, text);
  if (!svg_path) return;
  std::string cmd = "dot -Tsvg " + sh_quote(dot_file) + " -o " + sh_quote(*svg_path);
  int rc = std::system(cmd.c_str());
  if (!dot_path) std::filesystem::remove(dot_file);
  if (rc != 0) throw_bad_input("Graphviz's dot failed (exit " + std::to_string(rc) + ") rendering " + *svg_path);
}

int run_inspect(const Args& args) {
  LoadOptions load;
  load.overrides = parse_shape_flags(args);
  auto model = load_model(args.positional(0), load);
  ModelStats stats = model_stats(*model);
  json::Value arena;
  if (args.has("arena")) {
    ExecOptions eo;
    eo.threads = 1;
    Executor exec(*model, eo);
    // Tensors whose size shape inference left unknown (symbolic dims, ops ONNX cannot infer)
    // are planned at 0 bytes; one run on generated inputs records their sizes and re-plans, as
    // `fusor run` does after its first run.
    bool sized = true;
    const ExecPlan& plan = exec.plan();
    for (const Slot& sl : plan.slots())
      if (sl.kind == SlotKind::Intermediate && !sl.graph_output && sl.static_bytes == 0) sized = false;
    if (!sized) {
      NamedTensors inputs;
      std::vector<std::string> warnings;
      complete_inputs(*model->graph, inputs, InputOptions{}, &warnings);
      for (const std::string& w : warnings) FUSOR_LOG(Warn) << "--arena: " << w;
      exec.run(inputs);
    }
    arena = arena_json(exec);
    arena.set("sizes_from", sized ? "shapes" : "run");
  }
  write_drawings(args, *model, load.overrides);
  if (args.has("json")) {
    json::Value v = inspect_json(*model, stats);
    if (!arena.is_null()) v.set("arena", std::move(arena));
    std::cout << v.dump(2) << "\n";
  } else {
    print_text(std::cout, *model, stats);
    if (!arena.is_null()) print_arena(std::cout, arena);
  }
  return kExitOk;
}

}  // namespace

Command inspect_command() {
  Command c;
  c.name = "inspect";
  c.summary = "show a model's opsets, inputs and outputs, op histogram, fused nodes, memory plan and graph";
  c.usage = "MODEL [--json] [--arena] [--dot OUT.dot] [--svg OUT.svg] [--compare ORIGINAL] [--dim NAME=V]... "
            "[--shape INPUT=AxBxC]...";
  c.description =
      "Loads MODEL (with ONNX shape inference, after applying --dim/--shape) and prints what it holds.\n"
      "Node counts: top-level nodes, nodes inside subgraphs (If/Loop/Scan bodies), Constant nodes;\n"
      "the op histogram counts all depths. On a model fusor optimized, it also lists the fused nodes\n"
      "with the rule that made each and the original nodes it replaced. --arena plans the model and\n"
      "adds the memory plan. --dot/--svg draw the graph (fused nodes highlighted); --compare ORIGINAL\n"
      "draws ORIGINAL and MODEL side by side. See docs/cli.md for the JSON keys.";
  c.declare = [](ArgParser& p) {
    p.positional("MODEL", "an .onnx file")
        .flag("json", "print a JSON report instead of text")
        .flag("arena", "plan the model and add its memory plan (tensor lifetimes, offsets, peak, reuse)")
        .option("dot", "OUT.dot", "draw the graph as Graphviz DOT, fused nodes highlighted")
        .option("svg", "OUT.svg", "render the drawing as SVG through Graphviz's dot")
        .option("compare", "ORIGINAL", "draw ORIGINAL (before) and MODEL (after) side by side");
    add_shape_flags(p);
  };
  c.run = run_inspect;
  return c;
}

}  // namespace fusor::cli
