#include "operator/adapters/yaml/sweep_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <utility>

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

TEST(SweepFile, PlainScalarsReadAsTheCoreSchemaTypesThem) {
  struct Row {
    std::string plain;
    std::string json;  // the value as nlohmann_json dumps it: 1 is an integer, 1.0 a float
  };
  const Row rows[] = {
      {"+7", "7"},
      {"-0", "0"},
      {"9223372036854775807", "9223372036854775807"},
      {"9223372036854775808", "9.223372036854776e+18"},  // beyond int64: a float
      {"1.", "1.0"},
      {"+.5", "0.5"},
      {"2E3", "2000.0"},
      {"0x1F", "\"0x1F\""},
      {"1_000", "\"1_000\""},
      {"1e", "\"1e\""},
      {"TRUE", "true"},
      {"False", "false"},
      {"yes", "\"yes\""},
      {"Null", "null"},
      {"+.INF", "Infinity"},
      {".inf.", "\".inf.\""},
  };
  for (const Row& row : rows) {
    StatusOr<json> doc = ParseSweepText("v: " + row.plain + "\n", "t.yaml");
    ASSERT_TRUE(doc.ok()) << row.plain << ": " << doc.status().message();
    const json& value = (*doc)["v"];
    EXPECT_EQ(
        value.is_number_float() && std::isinf(value.get<double>()) ? "Infinity" : value.dump(),
        row.json)
        << row.plain;
  }
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

// Issue 40 point 5: a trailing `---` (an empty document) is ignored, as kubectl ignores it.
TEST(SweepFile, EmptyDocumentsAroundTheSweepAreIgnored) {
  for (const char* text :
       {"a: 1\n---\n", "a: 1\n---\n# the end\n---\n", "---\na: 1\n", "---\n---\na: 1\n...\n"}) {
    StatusOr<json> doc = ParseSweepText(text, "sweep.yaml");
    ASSERT_TRUE(doc.ok()) << text << ": " << doc.status().message();
    EXPECT_EQ(*doc, json({{"a", 1}})) << text;
  }
  EXPECT_FALSE(ParseSweepText("---\n---\n", "sweep.yaml").ok());
}

// Issue 40 point 5: a byte-order mark. UTF-8's is skipped; UTF-16's and UTF-32's are refused with
// a message that says what to do, not as an unknown field "\ufeffapiVersion".
TEST(SweepFile, Utf8ByteOrderMarkIsSkipped) {
  StatusOr<json> doc = ParseSweepText(
      "\xEF\xBB\xBF"
      "apiVersion: v1\n",
      "sweep.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(*doc, json({{"apiVersion", "v1"}}));
}

TEST(SweepFile, Utf16AndUtf32AreRefusedAskingForUtf8) {
  const std::pair<std::string, std::string> kFiles[] = {
      {std::string("\xFF\xFE"
                   "a\0:\0 \0"
                   "1\0",
                   10),
       "UTF-16"},
      {std::string("\xFE\xFF\0a\0:\0 \0"
                   "1",
                   10),
       "UTF-16"},
      {std::string("\xFF\xFE\0\0"
                   "a\0\0\0",
                   8),
       "UTF-32"},
      {std::string("\0\0\xFE\xFF\0\0\0a", 8), "UTF-32"}};
  for (const auto& [text, encoding] : kFiles) {
    StatusOr<json> doc = ParseSweepText(text, "sweep.yaml");
    ASSERT_FALSE(doc.ok());
    EXPECT_EQ(doc.status().message(), "sweep.yaml is " + encoding + "; save it as UTF-8");
  }
}

// Issue 40 point 5: merge keys, which kubectl resolves; keys the mapping sets itself win.
TEST(SweepFile, MergeKeysAreResolvedAsKubectlResolvesThem) {
  StatusOr<json> doc = ParseSweepText(
      "a: &a {min: 1, max: 2}\n"
      "b: &b {max: 5, log: true}\n"
      "one:\n  <<: *a\n  max: 3\n"
      "list: {<<: [*b, *a], type: int}\n",
      "sweep.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["one"], json({{"min", 1}, {"max", 3}}));
  EXPECT_EQ((*doc)["list"], json({{"min", 1}, {"max", 5}, {"log", true}, {"type", "int"}}))
      << "an earlier mapping of the list wins";
}

TEST(SweepFile, AQuotedMergeKeyIsAnOrdinaryKeyAndAMergeOfAScalarIsAnError) {
  StatusOr<json> doc = ParseSweepText("'<<': 1\n", "sweep.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ(*doc, json({{"<<", 1}}));
  doc = ParseSweepText("a: 1\nb:\n  <<: 2\n", "sweep.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message(),
            "sweep.yaml:3: a merge key (<<) takes a mapping or a list of mappings");
}

// Issue 40 point 5: a number too large for a double is an infinity (as .inf is), which the
// validator refuses by its field's name, not a string.
TEST(SweepFile, NumbersOutOfRangeAndInfinitiesAreNumbers) {
  StatusOr<json> doc =
      ParseSweepText("a: 1e309\nb: -1e309\nc: .inf\nd: -.Inf\ne: .nan\nf: 1e-400\n", "t.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ((*doc)["a"].get<double>(), inf);
  EXPECT_EQ((*doc)["b"].get<double>(), -inf);
  EXPECT_EQ((*doc)["c"].get<double>(), inf);
  EXPECT_EQ((*doc)["d"].get<double>(), -inf);
  EXPECT_TRUE(std::isnan((*doc)["e"].get<double>()));
  EXPECT_EQ((*doc)["f"].get<double>(), 0);
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

// "Billion laughs": nine levels of ten aliases each, 10^9 scalars once expanded.
std::string AliasBomb() {
  std::string text = "a0: &a0 [lol]\n";
  for (int level = 1; level <= 9; ++level) {
    std::string name = "a" + std::to_string(level), previous = "*a" + std::to_string(level - 1);
    text += name + ": &" + name + " [";
    for (int i = 0; i < 10; ++i) text += (i ? ", " : "") + previous;
    text += "]\n";
  }
  return text;
}

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

bool Mentions(const Status& status, const std::string& text) {
  return status.message().find(text) != std::string::npos;
}

TEST(SweepFileLimits, AliasBombIsRejectedNamingTheNodeLimit) {
  StatusOr<json> doc = ParseSweepText(AliasBomb(), "bomb.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message().rfind("bomb.yaml:", 0), 0u) << doc.status().message();
  EXPECT_TRUE(Mentions(doc.status(), "more than 100000 nodes with its aliases expanded"))
      << doc.status().message();
}

TEST(SweepFileLimits, AliasBombInASecondDocumentIsRejectedToo) {
  StatusOr<json> doc = ParseSweepText("a: 1\n---\n" + AliasBomb(), "bomb.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_TRUE(Mentions(doc.status(), "100000 nodes")) << doc.status().message();
}

TEST(SweepFileLimits, AliasesWithinTheLimitsAreExpanded) {
  StatusOr<json> doc = ParseSweepText("a: &x {k: [1, 2]}\nb: *x\nc: &s hi\nd: *s\n", "t.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["b"], json({{"k", {1, 2}}}));
  EXPECT_EQ((*doc)["d"], json("hi"));
}

TEST(SweepFileLimits, AnAliasInsideItsOwnAnchorIsRejected) {
  StatusOr<json> doc = ParseSweepText("a: &x [1, *x]\n", "t.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_TRUE(Mentions(doc.status(), "t.yaml:1:11: an alias refers to a node that contains it"))
      << doc.status().message();
}

TEST(SweepFileLimits, ScalarBytesRepeatedThroughAliasesAreBounded) {
  std::string text = "a: &big " + std::string(64 * 1024, 'x') + "\nb: [";
  for (int i = 0; i < 100; ++i) text += (i ? ", " : "") + std::string("*big");
  text += "]\n";
  StatusOr<json> doc = ParseSweepText(text, "t.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_TRUE(Mentions(doc.status(), "scalars exceed 4194304 bytes")) << doc.status().message();
}

TEST(SweepFileLimits, NestingIsBoundedAtTheLimit) {
  EXPECT_TRUE(ParseSweepText(Nested(kMaxSweepNestingDepth), "t.yaml").ok());
  StatusOr<json> doc = ParseSweepText(Nested(kMaxSweepNestingDepth + 1), "t.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_TRUE(Mentions(doc.status(), "nesting deeper than 64 levels")) << doc.status().message();
  EXPECT_FALSE(ParseSweepText(Nested(100'000), "t.yaml").ok()) << "far beyond yaml-cpp's own guard";
}

TEST(SweepFileLimits, NestingReachedThroughAnAliasCounts) {
  const int half = kMaxSweepNestingDepth / 2 + 1;
  std::string text = "a: &deep " + Nested(half) + "\nb: " + std::string(half, '[') + "*deep" +
                     std::string(half, ']') + "\n";
  StatusOr<json> doc = ParseSweepText(text, "t.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_TRUE(Mentions(doc.status(), "nesting deeper than 64 levels")) << doc.status().message();
}

TEST(SweepFileLimits, TooManyNodesWithoutAliasesAreRejected) {
  std::string text = "[0";
  for (size_t i = 0; i < kMaxSweepNodes; ++i) text += ",0";
  StatusOr<json> doc = ParseSweepText(text + "]", "t.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_TRUE(Mentions(doc.status(), "more than 100000 nodes")) << doc.status().message();
}

class SweepFileOnDisk : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sweep_file_test." + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(SweepFileOnDisk, FileOverTheSizeLimitIsRejectedNamingTheLimit) {
  const std::string path = (dir_ / "big.yaml").string();
  std::ofstream(path) << "a: " << std::string(kMaxSweepFileBytes, 'x') << "\n";
  StatusOr<json> doc = ReadSweepFile(path);
  ASSERT_FALSE(doc.ok());
  EXPECT_TRUE(Mentions(doc.status(), path + ": larger than the limit of 1048576 bytes"))
      << doc.status().message();
}

TEST_F(SweepFileOnDisk, DirectoryIsRejectedSayingSo) {
  StatusOr<json> doc = ReadSweepFile(dir_.string());
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message(), dir_.string() + ": is a directory; give a sweep file");
}

TEST_F(SweepFileOnDisk, FileWithinTheLimitsIsRead) {
  const std::string path = (dir_ / "ok.yaml").string();
  std::ofstream(path) << "a: [1, 2]\n";
  StatusOr<json> doc = ReadSweepFile(path);
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  EXPECT_EQ((*doc)["a"], json::array({1, 2}));
}

}  // namespace
}  // namespace bsw
