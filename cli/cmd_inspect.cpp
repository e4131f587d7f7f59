// fusor inspect MODEL [--json] [--dim ...] [--shape ...]
#include <iostream>

#include "cli/command.h"
#include "cli/optimize_flags.h"
#include "cli/report.h"
#include "engine/onnx/onnx_io.h"
#include "engine/session/model_stats.h"

namespace fusor::cli {

namespace {

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
}

int run_inspect(const Args& args) {
  LoadOptions load;
  load.overrides = parse_shape_flags(args);
  auto model = load_model(args.positional(0), load);
  ModelStats stats = model_stats(*model);
  if (args.has("json")) std::cout << inspect_json(*model, stats).dump(2) << "\n";
  else print_text(std::cout, *model, stats);
  return kExitOk;
}

}  // namespace

Command inspect_command() {
  Command c;
  c.name = "inspect";
  c.summary = "show a model's opsets, inputs and outputs, op histogram and weight size";
  c.usage = "MODEL [--json] [--dim NAME=V]... [--shape INPUT=AxBxC]...";
  c.description =
      "Loads MODEL (with ONNX shape inference, after applying --dim/--shape) and prints what it holds.\n"
      "Node counts: top-level nodes, nodes inside subgraphs (If/Loop/Scan bodies), Constant nodes;\n"
      "the op histogram counts all depths. See docs/cli.md for the JSON keys.";
  c.declare = [](ArgParser& p) {
    p.positional("MODEL", "an .onnx file").flag("json", "print a JSON report instead of text");
    add_shape_flags(p);
  };
  c.run = run_inspect;
  return c;
}

}  // namespace fusor::cli
