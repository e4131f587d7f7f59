// The parser and checks never throw or crash on damaged input: every fixture and golden, cut
// short and with bytes deleted, duplicated or replaced (a fixed seed, so failures reproduce),
// must load with diagnostics and no exception.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "dsl/provider.h"
#include "dsl/rules.h"

namespace fs = std::filesystem;
using namespace fusor::dsl;

namespace {

std::vector<std::string> sources() {
  std::vector<std::string> out;
  for (const char* dir : {"tests/dsl/golden", "tests/dsl/fixtures"}) {
    for (const auto& e : fs::directory_iterator(fs::path(FUSOR_SOURCE_DIR) / dir)) {
      if (!e.is_regular_file()) continue;
      std::ifstream f(e.path(), std::ios::binary);
      std::ostringstream ss;
      ss << f.rdbuf();
      out.push_back(ss.str());
    }
  }
  return out;
}

TEST(Robustness, DamagedInputNeverThrows) {
  std::mt19937 rng(12345);
  const std::string alphabet = "{}()<>[],;:=?._|&!#\"\n xX0-+*/%.e";
  size_t runs = 0;
  for (const std::string& text : sources()) {
    if (text.empty()) continue;  // the empty goldens of ok_* files
    for (int round = 0; round < 40; ++round) {
      std::string t = text;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !t.empty(); ++e) {
        size_t pos = rng() % t.size();
        switch (rng() % 4) {
          case 0: t.erase(pos, 1 + rng() % 8); break;
          case 1: t.insert(pos, 1, alphabet[rng() % alphabet.size()]); break;
          case 2: t[pos] = alphabet[rng() % alphabet.size()]; break;
          case 3: t.resize(pos); break;
        }
      }
      Diagnostics d1, d2;
      EXPECT_NO_THROW(load_rules_from_text("fuzz.rules", t, {}, d1)) << t;
      EXPECT_NO_THROW(parse_provider_text("fuzz.provider", t, {}, d2)) << t;
      ++runs;
    }
  }
  EXPECT_GT(runs, 500u);
}

}  // namespace
