// Saved optimized models: fusor-domain ops with the `fusor` opset import, provenance in each
// fused node's doc_string, the metadata stamp, the rule-set hash, and the refusal of a model
// optimized for another provider.
#include <set>

#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "engine/rewrite/provenance.h"
#include "engine/session/optimized_stamp.h"
#include "engine/session/rule_set_hash.h"
#include "tests/cli/cli_harness.h"
#include "tests/session/session_test_util.h"

namespace fusor::sessiontest {
namespace {

SessionOptions extended_with_test_rules(const std::string& out) {
  SessionOptions o;
  o.level = OptimizationLevel::Extended;
  o.rule_files = {conv_relu_rules()};
  o.no_default_rules = true;  // only the test rule makes fused nodes (the shipped ones would too)
  o.optimized_model_path = out;
  return o;
}

std::set<std::string> node_names(const Model& m) {
  std::set<std::string> names;
  for (NodeId n = m.graph->first(); n != kNoNode; n = m.graph->next(n)) names.insert(m.graph->node(n).name);
  return names;
}

TEST(SavedModel, FusedNodesCarryProvenanceAndTheFusorOpset) {
  TempDir d;
  std::string out = d.path("sq.opt.onnx");
  Session s(squeezenet(), extended_with_test_rules(out));
  EXPECT_EQ(s.optimization_report().rules_fired.at("test_conv_relu"), 26);

  auto original = load_model(squeezenet());
  std::set<std::string> originals = node_names(*original);
  auto saved = load_model(out);
  EXPECT_EQ(saved->opset("fusor"), 1);
  int fused = 0;
  std::set<std::string> replaced_all;
  for (NodeId n = saved->graph->first(); n != kNoNode; n = saved->graph->next(n)) {
    const Node& node = saved->graph->node(n);
    if (node.op.domain() != "fusor") {
      EXPECT_FALSE(parse_provenance(node.doc_string)) << node.name;
      continue;
    }
    ++fused;
    EXPECT_EQ(node.op.name(), "FusedConv");
    auto p = parse_provenance(node.doc_string);
    ASSERT_TRUE(p) << node.name << ": doc_string '" << node.doc_string << "'";
    EXPECT_EQ(p->rule, "test_conv_relu");
    ASSERT_EQ(p->replaced.size(), 2u) << node.doc_string;
    // The replaced names are the original model's Conv and Relu, gone from the saved model.
    for (const std::string& r : p->replaced) {
      EXPECT_TRUE(originals.count(r)) << r;
      EXPECT_TRUE(replaced_all.insert(r).second) << r << " replaced twice";
    }
    EXPECT_NE(p->replaced[0].find("Conv"), std::string::npos) << p->replaced[0];
    EXPECT_NE(p->replaced[1].find("Relu"), std::string::npos) << p->replaced[1];
  }
  EXPECT_EQ(fused, 26);
  EXPECT_EQ(replaced_all.size(), 52u);

  auto stamp = read_stamp(*saved);
  ASSERT_TRUE(stamp);
  EXPECT_EQ(stamp->provider, "cpu");
  EXPECT_EQ(stamp->level, "extended");
  EXPECT_EQ(stamp->rule_set_hash, s.optimization_report().rule_set_hash);
  EXPECT_EQ(stamp->version, std::string(version()));

  // fusor runs the saved model and agrees with the original (level disabled for both).
  SessionOptions plain;
  plain.level = OptimizationLevel::Disabled;
  Session a(squeezenet(), plain), b(out, plain);
  SqueezenetInput in;
  EXPECT_LE(max_abs_diff(a.run(in.feed())[0], b.run(in.feed())[0]), 1e-4);
}

TEST(SavedModel, ProvenanceFoldsEarlierRewrites) {
  // Relu(Relu(x)) -> Relu(x) by rule a, then Relu -> Sigmoid-free marker op by rule b: the final
  // node replaces both original Relus, via rule a.
  Model m;
  m.opsets.push_back({"", 17});
  Graph& g = *m.graph;
  ValueId x = g.add_value("x", ValueType::tensor(DataType::Float, {2, 3}));
  g.add_input(x);
  NodeId r1 = g.create_node(OpType::onnx("Relu"), {x}, 1, {}, "r1");
  NodeId r2 = g.create_node(OpType::onnx("Relu"), {g.node(r1).outputs[0]}, 1, {}, "r2");
  g.add_output(g.node(r2).outputs[0]);
  Provenance a = provenance_of_rewrite(g, "relu_relu", {r1, r2});
  EXPECT_EQ(a.replaced, (std::vector<std::string>{"r1", "r2"}));
  EXPECT_TRUE(a.via.empty());
  // A node made by relu_relu, then matched with another original by a second rule.
  g.node(r1).doc_string = provenance_doc_string(a);
  Provenance b = provenance_of_rewrite(g, "second", {r1, r2});
  EXPECT_EQ(b.rule, "second");
  EXPECT_EQ(b.replaced, (std::vector<std::string>{"r1", "r2"}));
  EXPECT_EQ(b.via, (std::vector<std::string>{"relu_relu"}));
  auto round = parse_provenance(provenance_doc_string(b));
  ASSERT_TRUE(round);
  EXPECT_EQ(round->via, b.via);
  EXPECT_EQ(round->replaced, b.replaced);
  // Other doc_strings are not provenance.
  EXPECT_FALSE(parse_provenance("a ReLU"));
  EXPECT_FALSE(parse_provenance("{\"rule\": \"x\"}"));
  EXPECT_FALSE(parse_provenance("{\"fusor_rule\": 3}"));
}

TEST(SavedModel, AnotherProvidersModelIsRefused) {
  TempDir d;
  std::string out = d.path("sq.opt.onnx");
  { Session s(squeezenet(), extended_with_test_rules(out)); }
  // Pretend it was optimized for another provider's kernels.
  auto m = load_model(out);
  for (auto& [k, v] : m->metadata)
    if (k == kMetaProvider) v = "xnnpack";
  std::string foreign = d.path("foreign.onnx");
  save_model(*m, foreign);

  try {
    Session s(foreign);
    FAIL() << "accepted a model optimized for xnnpack";
  } catch (const Exception& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidGraph);
    EXPECT_EQ(e.exit_code(), 2);
    std::string msg = e.what();
    EXPECT_NE(msg.find("optimized by fusor for provider 'xnnpack'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("providers are cpu"), std::string::npos) << msg;
  }
  // The CLI refuses it with exit 2 and the same message, at every level.
  for (const char* level : {"disabled", "all"}) {
    auto r = clitest::run_fusor({"run", foreign, "--level", level});
    EXPECT_EQ(r.exit_code, 2) << level << ": " << r.err;
    EXPECT_NE(r.err.find("provider 'xnnpack'"), std::string::npos) << r.err;
  }
  // Its own provider's model runs.
  auto ok = clitest::run_fusor({"run", out});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(SavedModel, RuleSetHashFollowsTheTexts) {
  TempDir d;
  write_text(d.path("a.rules"), read_file_text(conv_relu_rules()));
  OptimizeOptions o;
  o.level = OptLevel::Extended;
  o.rule_files = {conv_relu_rules()};
  std::string h = rule_set_hash(o);
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(h, rule_set_hash(o));  // deterministic
  OptimizeOptions moved = o;
  moved.rule_files = {d.path("a.rules")};
  EXPECT_EQ(rule_set_hash(moved), h);  // same text elsewhere
  write_text(d.path("a.rules"), read_file_text(conv_relu_rules()) + "# changed\n");
  EXPECT_NE(rule_set_hash(moved), h);
  OptimizeOptions disabled = o;
  disabled.disabled = {"test_conv_relu"};
  EXPECT_NE(rule_set_hash(disabled), h);
  OptimizeOptions nodefault = o;
  nodefault.no_default_rules = true;
  EXPECT_NE(rule_set_hash(nodefault), h);
  // Imports are part of it.
  write_text(d.path("inc.rules"), "fusor-rules 1\n");
  write_text(d.path("top.rules"), "fusor-rules 1\nimport \"inc.rules\"\n");
  OptimizeOptions imp = o;
  imp.rule_files = {d.path("top.rules")};
  std::string before = rule_set_hash(imp);
  auto files = rule_set_files(imp);
  EXPECT_NE(std::find(files.begin(), files.end(), d.path("inc.rules")), files.end());
  write_text(d.path("inc.rules"), "fusor-rules 1\n# edited\n");
  EXPECT_NE(rule_set_hash(imp), before);
}

}  // namespace
}  // namespace fusor::sessiontest
