#include "engine/rewrite/provenance.h"

#include <unordered_set>

#include "core/util/error.h"
#include "core/util/json.h"

namespace fusor {

Provenance provenance_of_rewrite(const Graph& g, const std::string& rule, const std::vector<NodeId>& matched) {
  Provenance p;
  p.rule = rule;
  std::unordered_set<std::string> seen_replaced, seen_via;
  auto add = [](std::vector<std::string>& list, std::unordered_set<std::string>& seen, const std::string& s) {
    if (seen.insert(s).second) list.push_back(s);
  };
  // Pattern order (match statements are written producers first); no graph walk, so a rewrite
  // costs O(match size + the matched nodes' own records).
  for (NodeId n : matched) {
    const Node& node = g.node(n);
    if (auto earlier = parse_provenance(node.doc_string)) {
      for (const auto& v : earlier->via) add(p.via, seen_via, v);
      add(p.via, seen_via, earlier->rule);
      for (const auto& r : earlier->replaced) add(p.replaced, seen_replaced, r);
      continue;
    }
    add(p.replaced, seen_replaced, node.name.empty() ? "(unnamed " + node.op.name() + ")" : node.name);
  }
  return p;
}

std::string provenance_doc_string(const Provenance& p) {
  json::Value v = json::Value::object();
  v.set("fusor_rule", p.rule);
  json::Value replaced = json::Value::array();
  for (const auto& r : p.replaced) replaced.push_back(r);
  v.set("replaced", std::move(replaced));
  if (!p.via.empty()) {
    json::Value via = json::Value::array();
    for (const auto& r : p.via) via.push_back(r);
    v.set("via", std::move(via));
  }
  return v.dump();
}

std::optional<Provenance> parse_provenance(const std::string& doc_string) {
  if (doc_string.empty() || doc_string.front() != '{' || doc_string.find("\"fusor_rule\"") == std::string::npos)
    return std::nullopt;
  try {
    json::Value v = json::parse(doc_string);
    const json::Value* rule = v.find("fusor_rule");
    if (!rule || !rule->is_string()) return std::nullopt;
    Provenance p;
    p.rule = rule->as_string();
    for (const char* key : {"replaced", "via"}) {
      const json::Value* list = v.find(key);
      if (!list) continue;
      if (!list->is_array()) return std::nullopt;
      for (const json::Value& x : list->as_array()) {
        if (!x.is_string()) return std::nullopt;
        (key[0] == 'r' ? p.replaced : p.via).push_back(x.as_string());
      }
    }
    return p;
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace fusor
