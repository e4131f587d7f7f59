// Round trip: printing a parsed file and parsing the print gives the same print, for every
// fixture and every golden input that parses without syntax errors; and the print of the brief's
// examples still checks cleanly.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "dsl/parser.h"
#include "dsl/printer.h"
#include "dsl/rules.h"

namespace fs = std::filesystem;
using namespace fusor::dsl;

namespace {

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(Printer, RoundTripsEveryParsableFile) {
  size_t checked = 0;
  for (const char* dir : {"tests/dsl/fixtures", "tests/dsl/golden", "tests/dsl/golden/inc"}) {
    for (const auto& e : fs::directory_iterator(fs::path(FUSOR_SOURCE_DIR) / dir)) {
      if (e.path().extension() != ".rules") continue;
      Diagnostics d1;
      auto f1 = parse_rule_text(e.path().filename().string(), read(e.path()), d1);
      if (d1.has_errors()) continue;  // syntax goldens
      const std::string p1 = print_file(*f1);
      Diagnostics d2;
      auto f2 = parse_rule_text("printed.rules", p1, d2);
      EXPECT_FALSE(d2.has_errors()) << e.path() << "\n" << d2.str() << p1;
      EXPECT_EQ(print_file(*f2), p1) << e.path();
      EXPECT_EQ(f2->rules.size(), f1->rules.size());
      EXPECT_EQ(f2->patterns.size(), f1->patterns.size());
      ++checked;
    }
  }
  EXPECT_GE(checked, 15u);
}

TEST(Printer, PrintedBriefExamplesStillCheck) {
  Diagnostics d;
  auto f = parse_rule_text("b.rules", read(fs::path(FUSOR_SOURCE_DIR) / "tests/dsl/fixtures/brief_examples.rules"), d);
  ASSERT_FALSE(d.has_errors()) << d.str();
  Diagnostics d2;
  RuleSet rs = load_rules_from_text("printed.rules", print_file(*f), {}, d2);
  EXPECT_TRUE(d2.empty()) << d2.str();
  EXPECT_EQ(rs.rules.size(), 6u);
}

TEST(Printer, ParenthesizesOnlyWherePrecedenceNeedsIt) {
  Diagnostics d;
  auto f = parse_rule_text("p.rules",
                           "fusor-rules 1\nrule r match { y = Relu(x) }\n"
                           "where { (a || b) && !(c < d) && -(e - f) * g == [1, -2] && (h - i) - j == h - (i - j) }\n"
                           "rewrite { y = Conv <...c, pads = [0, 0]> (x, w ?? 0.0) }\n",
                           d);
  ASSERT_FALSE(d.has_errors()) << d.str();
  EXPECT_EQ(print_expr(*f->rules[0]->where[0]),
            "(a || b) && !(c < d) && -(e - f) * g == [1, -2] && h - i - j == h - (i - j)");
  EXPECT_EQ(print_statement(f->rules[0]->rewrite[0]), "y = Conv <...c, pads = [0, 0]> (x, w ?? 0.0)");
}

}  // namespace
