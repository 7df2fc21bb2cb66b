#include "operator/adapters/yaml/sweep_file.h"

#include <gtest/gtest.h>

namespace bsw {
namespace {

using nlohmann::json;

TEST(SweepFile, PlainScalarsFollowTheYamlCoreSchema) {
  StatusOr<json> doc = ParseSweepText(
      "a: 1\nb: 1.0e-4\nc: true\nd: null\ne: hello\nf: '42'\ng: \"true\"\nh: -3\ni: .5\nj: ~\n",
      "t.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["a"], json(1));
  EXPECT_TRUE((*doc)["a"].is_number_integer());
  EXPECT_DOUBLE_EQ((*doc)["b"].get<double>(), 1.0e-4);
  EXPECT_EQ((*doc)["c"], json(true));
  EXPECT_TRUE((*doc)["d"].is_null());
  EXPECT_EQ((*doc)["e"], json("hello"));
  EXPECT_EQ((*doc)["f"], json("42")) << "a quoted number stays a string";
  EXPECT_EQ((*doc)["g"], json("true"));
  EXPECT_EQ((*doc)["h"], json(-3));
  EXPECT_DOUBLE_EQ((*doc)["i"].get<double>(), 0.5);
  EXPECT_TRUE((*doc)["j"].is_null());
}

TEST(SweepFile, NestedFlowAndBlockCollectionsBecomeJson) {
  StatusOr<json> doc =
      ParseSweepText("spec:\n  values: [64, 128]\n  items:\n    - {name: x, v: 2}\n", "t.yaml");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ((*doc)["spec"]["values"], json::array({64, 128}));
  EXPECT_EQ((*doc)["spec"]["items"][0]["name"], json("x"));
}

TEST(SweepFile, SyntaxErrorNamesFileLineAndColumn) {
  StatusOr<json> doc = ParseSweepText("a: 1\nb: [1, 2\n", "sweep.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message().rfind("sweep.yaml:", 0), 0u) << doc.status().message();
}

TEST(SweepFile, DuplicateKeyIsAnError) {
  StatusOr<json> doc = ParseSweepText("a: 1\na: 2\n", "sweep.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("duplicate key \"a\""), std::string::npos);
}

TEST(SweepFile, SeveralDocumentsAreAnError) {
  StatusOr<json> doc = ParseSweepText("a: 1\n---\nb: 2\n", "sweep.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("2 documents"), std::string::npos);
}

TEST(SweepFile, EmptyFileIsAnError) { EXPECT_FALSE(ParseSweepText("", "empty.yaml").ok()); }

TEST(SweepFile, MissingFileNamesThePath) {
  StatusOr<json> doc = ReadSweepFile("/nonexistent/sweep.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("/nonexistent/sweep.yaml"), std::string::npos);
}

TEST(SweepFile, JsonFilesAreRead) {
  StatusOr<json> doc = ParseSweepText(R"({"a": [1, 2.5, "x"], "b": {"c": false}})", "t.json");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["a"], json::array({1, 2.5, "x"}));
  EXPECT_EQ((*doc)["b"]["c"], json(false));
}

}  // namespace
}  // namespace bsw
