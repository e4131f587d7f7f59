#include "engine/session/dot.h"

#include "core/ir/symbol.h"
#include "engine/rewrite/provenance.h"

namespace fusor {

namespace {

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

std::string shape_label(const ValueType& t) {
  if (!t.is_tensor() || !t.has_shape) return "";
  std::string s;
  for (const Dim& d : t.dims) s += (s.empty() ? "" : "x") + (d.is_known() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param));
  return s.empty() ? "scalar" : s;
}

int64_t count_nodes(const Graph& g) {
  int64_t n = 0;
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id)) {
    ++n;
    for (const Graph* sub : g.subgraphs(id)) n += count_nodes(*sub);
  }
  return n;
}

// The statements of one graph; `p` prefixes every id so two graphs can share a digraph.
void write_body(std::string& out, const Graph& g, const std::string& p, const std::string& indent) {
  auto value_src = [&](ValueId v) -> std::string {
    const Value& val = g.value(v);
    if (val.producer != kNoNode) return p + "n" + std::to_string(val.producer);
    if (val.is_graph_input && !val.is_initializer()) return p + "in" + std::to_string(v);
    return "";
  };
  for (ValueId v : g.inputs()) {
    const Value& val = g.value(v);
    if (val.is_initializer()) continue;
    out += indent + p + "in" + std::to_string(v) + " [shape=ellipse, style=filled, fillcolor=\"#d9ead3\", label=\"" +
           esc(val.name + "\n" + shape_label(val.type)) + "\"];\n";
  }
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id)) {
    const Node& n = g.node(id);
    std::string label = n.op.qualified() + (n.name.empty() ? "" : "\n" + n.name);
    int64_t inner = 0;
    for (const Graph* sub : g.subgraphs(id)) inner += count_nodes(*sub);
    if (inner) label += "\n(" + std::to_string(inner) + " nodes in subgraphs)";
    std::string attrs = "label=\"" + esc(label) + "\"";
    auto prov = parse_provenance(n.doc_string);
    bool fused_op = n.op.domain() == kFusorDomain;
    if (prov) {
      std::string replaced;
      for (const auto& r : prov->replaced) replaced += (replaced.empty() ? "" : ", ") + r;
      attrs += ", style=filled, fillcolor=\"#ffb347\", tooltip=\"" + esc("rule " + prov->rule + " replaced " + replaced) + "\"";
    } else if (fused_op) {
      attrs += ", style=filled, fillcolor=\"#ffb347\"";
    }
    if (fused_op) attrs += ", penwidth=2, fontname=\"Helvetica-Bold\"";
    out += indent + p + "n" + std::to_string(id) + " [" + attrs + "];\n";
  }
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id)) {
    const Node& n = g.node(id);
    std::vector<ValueId> ins = n.inputs;
    ins.insert(ins.end(), n.implicit_inputs.begin(), n.implicit_inputs.end());
    for (ValueId v : ins) {
      if (v == kNoValue) continue;
      std::string src = value_src(v);
      if (src.empty()) continue;
      std::string lab = shape_label(g.value(v).type);
      out += indent + src + " -> " + p + "n" + std::to_string(id) + (lab.empty() ? "" : " [label=\"" + esc(lab) + "\"]") + ";\n";
    }
  }
  const auto& outs = g.outputs();
  for (size_t k = 0; k < outs.size(); ++k) {
    const Value& val = g.value(outs[k]);
    std::string id = p + "out" + std::to_string(k);
    out += indent + id + " [shape=ellipse, style=filled, fillcolor=\"#cfe2f3\", label=\"" +
           esc(val.name + "\n" + shape_label(val.type)) + "\"];\n";
    std::string src = value_src(outs[k]);
    if (!src.empty()) out += indent + src + " -> " + id + ";\n";
  }
}

const char* kHeader = "  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=8];\n";

}  // namespace

std::string model_dot(const Model& model, const std::string& title) {
  std::string out = "digraph fusor {\n  rankdir=TB;\n  labelloc=t;\n  label=\"" +
                    esc(title + " (" + std::to_string(model.graph->num_nodes()) + " nodes)") + "\";\n" + kHeader;
  write_body(out, *model.graph, "", "  ");
  out += "}\n";
  return out;
}

std::string compare_dot(const Model& before, const std::string& before_title, const Model& after,
                        const std::string& after_title) {
  std::string out = std::string("digraph fusor_compare {\n  rankdir=TB;\n  newrank=true;\n") + kHeader;
  auto cluster = [&](const Model& m, const std::string& title, const std::string& p) {
    out += "  subgraph cluster_" + p + " {\n    label=\"" +
           esc(title + " (" + std::to_string(m.graph->num_nodes()) + " nodes)") + "\";\n";
    write_body(out, *m.graph, p, "    ");
    out += "  }\n";
  };
  cluster(before, before_title, "before_");
  cluster(after, after_title, "after_");
  out += "}\n";
  return out;
}

}  // namespace fusor
