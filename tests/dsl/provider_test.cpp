// Provider definitions: the parsed structure of a valid definition (errors are in the goldens).
#include <gtest/gtest.h>
#include <unistd.h>

#include "dsl/provider.h"

using namespace fusor::dsl;

namespace {

TEST(Provider, ParsesLayoutRulesAndKernels) {
  ASSERT_EQ(chdir(FUSOR_SOURCE_DIR), 0);
  Diagnostics d;
  auto p = load_provider("tests/dsl/golden/ok_cpu.provider", {}, d);
  ASSERT_TRUE(d.empty()) << d.str();
  EXPECT_EQ(p->name, "ok_cpu");
  EXPECT_EQ(p->layout, Layout::NCHW);
  EXPECT_EQ(p->rule_files(fusor::OptLevel::Basic), std::vector<std::string>{"tests/dsl/golden/inc/middle.rules"});
  EXPECT_EQ(p->rule_files(fusor::OptLevel::All),
            (std::vector<std::string>{"tests/dsl/golden/inc/middle.rules", "tests/dsl/golden/ok_everything.rules"}));
  EXPECT_EQ(p->kernels_for("", "Conv").size(), 1u);
  EXPECT_TRUE(p->kernels_for("", "Tanh").empty());
  auto fg = p->kernels_for("fusor", "FusedGemm");
  ASSERT_EQ(fg.size(), 1u);
  ASSERT_NE(fg[0]->where, nullptr);
  EXPECT_EQ(fg[0]->where->dyn<BinaryExpr>()->op, BinaryOp::In);
  EXPECT_EQ(p->kernels_for("fusor", "FusedConv")[0]->where, nullptr);
}

TEST(Provider, TextWithNhwcAndNoFiles) {
  Diagnostics d;
  auto p = parse_provider_text("x.provider", "fusor-provider 1\nlayout NHWC\nkernels { Conv where group == 1 }\n", {}, d);
  EXPECT_TRUE(d.empty()) << d.str();
  EXPECT_EQ(p->layout, Layout::NHWC);
  EXPECT_TRUE(p->rule_files(fusor::OptLevel::All).empty());
}

TEST(Provider, MissingFileAndMissingLayout) {
  Diagnostics d;
  auto p = load_provider("/nonexistent/zz.provider", {}, d);
  EXPECT_TRUE(p->has_errors);
  EXPECT_EQ(d.str(), "/nonexistent/zz.provider: error: cannot open provider definition '/nonexistent/zz.provider': No such file or directory\n");
  Diagnostics d2;
  parse_provider_text("y.provider", "fusor-provider 1\nkernels { Relu }\n", {}, d2);
  EXPECT_NE(d2.str().find("y.provider:1:1: error: the provider does not state its layout"), std::string::npos) << d2.str();
}

}  // namespace
