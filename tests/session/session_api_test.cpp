// fusor::Session (include/fusor/session.h): metadata, runs, zero-copy inputs, errors, statistics.
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/ir/model.h"
#include "core/onnx/onnx_io.h"
#include "core/util/json.h"
#include "tests/session/session_test_util.h"

namespace fusor::sessiontest {
namespace {

// Y = Relu(X) with X: float[N, 4] ("N" symbolic), serialized through the engine's exporter.
std::string relu_model_bytes() {
  Model m;
  m.opsets.push_back({"", 17});
  Graph& g = *m.graph;
  ValueType t = ValueType::tensor(DataType::Float);
  t.has_shape = true;
  t.dims = {Dim::symbol("N"), Dim::known(4)};
  ValueId x = g.add_value("X", t);
  g.add_input(x);
  NodeId n = g.create_node(OpType::onnx("Relu"), {x}, 1, {}, "relu");
  ValueId y = g.node(n).outputs[0];
  g.rename_value(y, "Y");
  g.value(y).type = t;
  g.add_output(y);
  return serialize_model(m);
}

TEST(SessionApi, MetadataOfSqueezenet) {
  Session s(squeezenet());
  ASSERT_EQ(s.inputs().size(), 1u);
  EXPECT_EQ(s.inputs()[0].name, "input");
  EXPECT_EQ(s.inputs()[0].type, "tensor(float)");
  EXPECT_EQ(s.inputs()[0].element_type, ElementType::Float);
  EXPECT_EQ(s.inputs()[0].shape, (std::vector<int64_t>{-1, 3, 224, 224}));
  EXPECT_EQ(s.inputs()[0].dim_names, (std::vector<std::string>{"N", "", "", ""}));
  ASSERT_EQ(s.outputs().size(), 1u);
  EXPECT_EQ(s.outputs()[0].name, "logits");
  EXPECT_EQ(s.outputs()[0].shape, (std::vector<int64_t>{-1, 1000}));
}

TEST(SessionApi, SymbolicDimsByName) {
  Session s = Session::from_bytes(relu_model_bytes());
  ASSERT_EQ(s.inputs().size(), 1u);
  const TensorInfo& in = s.inputs()[0];
  EXPECT_TRUE(in.has_shape);
  EXPECT_EQ(in.shape, (std::vector<int64_t>{-1, 4}));
  EXPECT_EQ(in.dim_names, (std::vector<std::string>{"N", ""}));
  // Any N runs; Relu's answer is checked element by element.
  std::vector<float> x = {-1, 2, -3, 4, 5, -6, 7, -8, 0, 0.5f, -0.5f, 9};
  auto out = s.run({{"X", HostTensor::borrow(ElementType::Float, {3, 4}, x.data(), x.size() * 4)}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{3, 4}));
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(out[0].data<float>()[i], std::max(0.0f, x[i])) << i;
}

TEST(SessionApi, DimOverrideFixesTheShape) {
  SessionOptions o;
  o.dim_overrides = {{"N", 2}};
  Session s = Session::from_bytes(relu_model_bytes(), o);
  EXPECT_EQ(s.inputs()[0].shape, (std::vector<int64_t>{2, 4}));
  std::vector<float> x(12, 1.0f);
  EXPECT_THROW(s.run({{"X", HostTensor::borrow(ElementType::Float, {3, 4}, x.data(), x.size() * 4)}}), Exception);
}

TEST(SessionApi, OptimizedAgreesWithUnoptimized) {
  SqueezenetInput in;
  SessionOptions plain;
  plain.level = OptimizationLevel::Disabled;
  Session ref(squeezenet(), plain);
  Session opt(squeezenet());
  auto a = ref.run(in.feed());
  auto b = opt.run(in.feed());
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_LE(max_abs_diff(a[0], b[0]), 1e-4);
  // The output is a softmax-free score vector; it must not be all zeros.
  double sum = 0;
  for (int64_t i = 0; i < b[0].element_count(); ++i) sum += std::fabs(b[0].data<float>()[i]);
  EXPECT_GT(sum, 0);
}

TEST(SessionApi, FromBytesMatchesFromPath) {
  std::ifstream f(squeezenet(), std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  Session a(squeezenet());
  Session b = Session::from_bytes(ss.str());
  SqueezenetInput in;
  EXPECT_EQ(max_abs_diff(a.run(in.feed())[0], b.run(in.feed())[0]), 0.0);
}

TEST(SessionApi, InputsAreNotCopiedAndOutputsOutliveTheRun) {
  Session s = Session::from_bytes(relu_model_bytes());
  std::vector<float> x = {1, -2, 3, -4};
  HostTensor in = HostTensor::borrow(ElementType::Float, {1, 4}, x.data(), x.size() * 4);
  EXPECT_EQ(in.data(), x.data());
  EXPECT_FALSE(in.owns_memory());
  auto out = s.run({{"X", in}});
  EXPECT_TRUE(out[0].owns_memory());
  // Changing the caller's buffer changes the next run's answer: the kernels read it in place.
  x[1] = 10;
  auto out2 = s.run({{"X", in}});
  EXPECT_EQ(out2[0].data<float>()[1], 10.0f);
  EXPECT_EQ(out[0].data<float>()[1], 0.0f);  // the first output is still intact
}

TEST(SessionApi, SelectedOutputsByName) {
  Session s = Session::from_bytes(relu_model_bytes());
  std::vector<float> x = {1, -2, 3, -4};
  auto out = s.run({{"X", HostTensor::borrow(ElementType::Float, {1, 4}, x.data(), 16)}}, {"Y"});
  ASSERT_EQ(out.size(), 1u);
  try {
    s.run({{"X", HostTensor::borrow(ElementType::Float, {1, 4}, x.data(), 16)}}, {"Z"});
    FAIL() << "no exception";
  } catch (const Exception& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no output 'Z'"), std::string::npos) << e.what();
  }
}

void expect_error(ErrorCode code, const std::string& fragment, const std::function<void()>& f) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected " << error_code_name(code) << " with '" << fragment << "'";
  } catch (const Exception& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(SessionApi, WrongInputsAreInvalidArgument) {
  Session s(squeezenet());
  std::vector<float> px(3 * 224 * 224);
  std::vector<int64_t> ix(3 * 224 * 224);
  auto good = HostTensor::borrow(ElementType::Float, {1, 3, 224, 224}, px.data(), px.size() * 4);
  expect_error(ErrorCode::InvalidArgument, "no input 'image'", [&] { s.run({{"image", good}}); });
  expect_error(ErrorCode::InvalidArgument, "missing input 'input'", [&] { s.run({}); });
  expect_error(ErrorCode::InvalidArgument, "given twice", [&] { s.run({{"input", good}, {"input", good}}); });
  expect_error(ErrorCode::InvalidArgument, "expected tensor(float) (float[N,3,224,224]), got tensor(int64) of shape 1x3x224x224", [&] {
    s.run({{"input", HostTensor::borrow(ElementType::Int64, {1, 3, 224, 224}, ix.data(), ix.size() * 8)}});
  });
  expect_error(ErrorCode::InvalidArgument, "expected rank 4", [&] {
    s.run({{"input", HostTensor::borrow(ElementType::Float, {3, 224, 224}, px.data(), px.size() * 4)}});
  });
  expect_error(ErrorCode::InvalidArgument, "dimension 2 is 112", [&] {
    s.run({{"input", HostTensor::borrow(ElementType::Float, {1, 3, 112, 224}, px.data(), px.size() * 4)}});
  });
  expect_error(ErrorCode::InvalidArgument, "bytes given", [&] {
    HostTensor::borrow(ElementType::Float, {1, 3, 224, 224}, px.data(), 16);
  });
}

TEST(SessionApi, CreationErrorsHaveCodes) {
  expect_error(ErrorCode::NoSuchFile, "/no/such/model.onnx: cannot open: No such file or directory", [] { Session s("/no/such/model.onnx"); });
  expect_error(ErrorCode::InvalidGraph, "", [] { Session::from_bytes("this is not a model"); });
  SessionOptions o;
  o.providers = {"gpu9"};
  expect_error(ErrorCode::InvalidArgument, "unknown provider 'gpu9'", [&] { Session s(squeezenet(), o); });
  SessionOptions bad_rule;
  bad_rule.disabled_rules = {"no_such_rule"};
  bad_rule.level = OptimizationLevel::Basic;
  expect_error(ErrorCode::InvalidArgument, "no_such_rule", [&] { Session s(squeezenet(), bad_rule); });
  expect_error(ErrorCode::InvalidArgument, "unknown optimization level", [] { parse_level("turbo"); });
  EXPECT_EQ(parse_level("extended"), OptimizationLevel::Extended);
}

// Issue 18: the diagnostics of a bad rule file are in the exception's text (a host app or a
// notebook sees no stderr), not "see above".
TEST(SessionApi, ARuleFileErrorCarriesItsDiagnostics) {
  TempDir d;
  write_text(d.path("bad.rules"), "fusor-rules 1\n\nrule broken\n  match { y = NoSuchOp(x) }\n  rewrite { y = x }\n");
  SessionOptions o;
  o.rule_files = {d.path("bad.rules")};
  try {
    Session s(squeezenet(), o);
    FAIL() << "a bad rule file was accepted";
  } catch (const Exception& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidGraph);
    std::string m = e.what();
    EXPECT_NE(m.find("1 error(s) in rule files:\n" + d.path("bad.rules") + ":4:15: error: unknown op 'NoSuchOp'"),
              std::string::npos) << m;
    EXPECT_NE(m.find("  match { y = NoSuchOp(x) }\n              ^"), std::string::npos) << m;
    EXPECT_EQ(m.find("see above"), std::string::npos) << m;
  }
  SessionOptions missing;
  missing.rule_files = {d.path("nope.rules")};
  expect_error(ErrorCode::InvalidGraph, "cannot open rules file '" + d.path("nope.rules") + "': No such file or directory",
               [&] { Session s(squeezenet(), missing); });
}

TEST(SessionApi, WarningsGoToTheHostsLogHandler) {
  const std::string path = ::testing::TempDir() + "session_api_warn.rules";
  std::ofstream(path) << "fusor-rules 1\nrule unused_temporary\n  match { y = Acosh(x) }\n"
                         "  rewrite { k = Neg(x)\n            y = Acos(x) }\n";
  std::vector<std::string> warnings;
  set_log_handler([&](LogSeverity s, const std::string& m) {
    if (s == LogSeverity::Warning) warnings.push_back(m);
  });
  SessionOptions o;
  o.rule_files = {path};
  o.use_cache = false;
  EXPECT_NO_THROW(Session s(squeezenet(), o));
  set_log_handler(nullptr);
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  EXPECT_NE(all.find(path + ":4:13: warning: 'k' is defined but never used"), std::string::npos) << all;
}

TEST(SessionApi, ArenaAndTimingStatistics) {
  SessionOptions o;
  o.use_cache = false;
  Session s(squeezenet(), o);
  SqueezenetInput in;
  s.run(in.feed());  // outputs dropped: their buffers return to the pool
  s.run(in.feed());
  ArenaStats a = s.arena_stats();
  EXPECT_GT(a.intermediates, 0);
  EXPECT_GT(a.arena_bytes, 0u);
  EXPECT_LT(a.arena_bytes, a.naive_bytes);  // reuse saves memory on a 60-node chain
  EXPECT_EQ(a.last_run_allocs, 0);
  TimingStats t = s.timing();
  EXPECT_EQ(t.runs, 2);
  EXPECT_GT(t.last_run_ms, 0);
  EXPECT_NEAR(t.init_ms, t.load_ms + t.optimize_ms + t.save_ms + t.plan_ms, 1e-9);
  OptimizationReport r = s.optimization_report();
  EXPECT_EQ(r.level, "all");
  EXPECT_EQ(r.cache, "off");
  EXPECT_LE(r.nodes_after, r.nodes_before);
  EXPECT_EQ(r.rule_set_hash.size(), 16u);
}

TEST(SessionApi, ProfileIsAChromeTrace) {
  SessionOptions o;
  o.profile = true;
  Session s(squeezenet(), o);
  SqueezenetInput in;
  EXPECT_TRUE(s.last_profile().empty());
  s.run(in.feed());
  auto prof = s.last_profile();
  EXPECT_GE(prof.size(), 20u);
  json::Value trace = json::parse(s.last_profile_chrome_trace());
  EXPECT_TRUE(trace.is_array() || trace.is_object());
}

TEST(SessionApi, ConcurrentRunsAgree) {
  Session s(squeezenet());
  SqueezenetInput in;
  HostTensor want = s.run(in.feed())[0];
  std::vector<double> diffs(4, -1);
  std::vector<std::thread> ts;
  for (int k = 0; k < 4; ++k)
    ts.emplace_back([&, k] { diffs[k] = max_abs_diff(s.run(in.feed())[0], want); });
  for (auto& t : ts) t.join();
  for (double d : diffs) EXPECT_EQ(d, 0.0);
}

TEST(SessionApi, ModelMetadataAndOptions) {
  SessionOptions o;
  o.threads = 1;
  Session s(squeezenet(), o);
  EXPECT_EQ(s.options().threads, 1);
  ModelMetadata md = s.metadata();
  EXPECT_EQ(md.custom.at("fusor.provider"), "cpu");
  EXPECT_EQ(md.custom.at("fusor.level"), "all");
  EXPECT_STREQ(version(), "0.1.0");
  EXPECT_EQ(available_providers().front(), "cpu");
}

}  // namespace
}  // namespace fusor::sessiontest
