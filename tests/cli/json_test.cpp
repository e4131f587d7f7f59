// core/util/json: the writer the reports use and the parser the CLI tests read them with.
#include <gtest/gtest.h>

#include <cmath>

#include "core/util/error.h"
#include "core/util/json.h"

namespace fusor {
namespace {

TEST(Json, ObjectsKeepInsertionOrderAndSetReplaces) {
  json::Value v = json::Value::object();
  v.set("b", 1);
  v.set("a", "x");
  v.set("b", 2);
  EXPECT_EQ(v.dump(), R"({"b": 2, "a": "x"})");
}

TEST(Json, ScalarsDump) {
  EXPECT_EQ(json::Value().dump(), "null");
  EXPECT_EQ(json::Value(true).dump(), "true");
  EXPECT_EQ(json::Value(int64_t{-42}).dump(), "-42");
  EXPECT_EQ(json::Value(0.5).dump(), "0.5");
  EXPECT_EQ(json::Value(0.1).dump(), "0.1");
  EXPECT_EQ(json::Value(1e300).dump(), "1e+300");
  EXPECT_EQ(json::Value(std::nan("")).dump(), "null");
}

TEST(Json, StringsEscape) {
  EXPECT_EQ(json::quote("a\"b\\c\n\t\x01"), R"("a\"b\\c\n\t\u0001")");
}

TEST(Json, PrettyPrint) {
  json::Value v = json::Value::object();
  v.set("a", json::Value(json::Array{1, 2}));
  v.set("e", json::Value::object());
  EXPECT_EQ(v.dump(2), "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": {}\n}");
}

TEST(Json, RoundTrip) {
  std::string text = R"({"n": null, "t": true, "f": false, "i": -7, "d": 2.5, "s": "h\u00e9\ud83d\ude00", "a": [1, [2, {}]], "o": {"k": "v"}})";
  json::Value v = json::parse(text);
  EXPECT_EQ(v["i"].as_int(), -7);
  EXPECT_DOUBLE_EQ(v["d"].as_double(), 2.5);
  EXPECT_EQ(v["s"].as_string(), "h\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(v["a"][1][0].as_int(), 2);
  EXPECT_EQ(json::parse(v.dump()).dump(), v.dump());
  EXPECT_EQ(json::parse(v.dump(2)).dump(), v.dump());
}

TEST(Json, MapsBecomeObjects) {
  std::map<std::string, int64_t> m = {{"Conv", 3}, {"Add", 1}};
  EXPECT_EQ(json::Value(m).dump(), R"({"Add": 1, "Conv": 3})");
}

TEST(Json, ParseErrorsAreBadInputWithOffset) {
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "tru", "\"abc", "01", "1.", "[1] x", "\"\\ud800\"", "{\"a\":1,}"}) {
    try {
      json::parse(bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput) << bad;
      EXPECT_NE(std::string(e.what()).find("offset"), std::string::npos) << e.what();
    }
  }
}

TEST(Json, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '[');
  EXPECT_THROW(json::parse(deep), Error);
}

TEST(Json, KindMismatchIsInternalError) {
  json::Value v = json::parse("{\"a\": 1}");
  EXPECT_THROW(v["a"].as_string(), Error);
  EXPECT_THROW(v["missing"], Error);
}

}  // namespace
}  // namespace fusor
