// The shipped rule files (rules/basic, rules/extended) as the cpu provider runs them at the
// extended level, and a harness that rewrites a small graph with them and runs the graph before
// and after on the same random inputs (the executor; the original only through ONNX kernels).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <random>

#include "dsl/rules.h"
#include "engine/exec/executor.h"
#include "dsl/lower.h"
#include "engine/rewrite/runner.h"
#include "test_util.h"

namespace fusor::test {

inline std::vector<Rule> extended_rule_set() {
  std::vector<std::string> files;
  for (const char* dir : {"/rules/basic", "/rules/extended"})
    for (const auto& e : std::filesystem::directory_iterator(std::string(FUSOR_SOURCE_DIR) + dir))
      if (e.path().extension() == ".rules") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  dsl::Diagnostics diags;
  dsl::RuleSet set = dsl::load_rules(files, {}, diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  std::vector<Rule> rules = lower_rules(set.select(OptLevel::Extended, "cpu"), diags);
  EXPECT_FALSE(diags.has_errors()) << diags.str();
  return rules;
}

struct Fused {
  GB graph;
  RewriteReport report;
  double max_diff = 0;  // largest |after - before| over the outputs
  int fired(const std::string& rule) const {
    auto it = report.rules_fired.find(rule);
    return it == report.rules_fired.end() ? 0 : it->second;
  }
  int count(const char* fusor_op) const {
    int n = 0;
    for (NodeId id : graph.g.order()) n += graph.g.node(id).op == OpType(kFusorDomain, fusor_op);
    return n;
  }
  const Node* only(const char* fusor_op) const {
    for (NodeId id : graph.g.order())
      if (graph.g.node(id).op == OpType(kFusorDomain, fusor_op)) return &graph.g.node(id);
    return nullptr;
  }
};

// Builds the graph twice (at `opset`), rewrites one copy with the extended rule set, and runs
// both on inputs uniform in [lo, hi).
inline std::unique_ptr<Fused> fuse(const std::function<void(GB&)>& build, const std::vector<std::pair<std::string, Shape>>& inputs,
                                   int64_t opset = 17, float lo = -3.f, float hi = 3.f) {
  GB before;
  before.opset = opset;
  build(before);
  auto f = std::make_unique<Fused>();
  f->graph.opset = opset;
  build(f->graph);
  f->report = run_rewrites(f->graph.g, extended_rule_set(), RewriteOptions{}, opset);
  f->graph.g.verify();
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(lo, hi);
  NamedTensors feeds;
  for (const auto& [name, shape] : inputs) {
    Tensor t(DataType::Float, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(gen);
    feeds.push_back({name, std::move(t)});
  }
  const std::vector<OpsetImport> opsets = {{"", opset}, {kFusorDomain, 1}};
  const std::vector<Tensor> want = Executor(before.g, opsets).run(feeds);
  const std::vector<Tensor> got = Executor(f->graph.g, opsets).run(feeds);
  EXPECT_EQ(want.size(), got.size());
  for (size_t o = 0; o < want.size() && o < got.size(); ++o) {
    EXPECT_EQ(want[o].shape(), got[o].shape()) << "output " << o;
    if (want[o].shape() != got[o].shape()) continue;
    for (int64_t i = 0; i < want[o].numel(); ++i)
      f->max_diff = std::max(f->max_diff, std::fabs(want[o].as_double(i) - got[o].as_double(i)));
  }
  return f;
}

inline Tensor ramp(const Shape& s, float start, float step) {
  Tensor t(DataType::Float, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + step * static_cast<float>(i % 13);
  return t;
}

}  // namespace fusor::test
