#include "operator/adapters/prometheus/text_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace bsw::prom {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

Sample ParseOne(const std::string& line) {
  StatusOr<std::vector<Sample>> samples = ParseTextFormat(line);
  EXPECT_TRUE(samples.ok()) << samples.status().message();
  if (!samples.ok() || samples->size() != 1) {
    ADD_FAILURE() << "expected one sample from: " << line;
    return {};
  }
  return samples->front();
}

TEST(TextFormat, ParsesExpositionWithCommentsAndMetadata) {
  StatusOr<std::vector<Sample>> samples = ParseTextFormat(
      "# HELP budgetsweep_trainer_loss Training loss.\n"
      "# TYPE budgetsweep_trainer_loss gauge\n"
      "# any other comment\n"
      "\n"
      "budgetsweep_trainer_loss{sweep=\"s\",trial=\"t1\"} 0.25\n"
      "up 1 1700000000000\n");
  ASSERT_TRUE(samples.ok()) << samples.status().message();
  ASSERT_EQ(samples->size(), 2u);
  EXPECT_EQ((*samples)[0].name, "budgetsweep_trainer_loss");
  EXPECT_THAT((*samples)[0].labels, ElementsAre(Pair("sweep", "s"), Pair("trial", "t1")));
  EXPECT_EQ((*samples)[0].value, 0.25);
  EXPECT_FALSE((*samples)[0].timestamp_ms.has_value());
  EXPECT_EQ((*samples)[1].name, "up");
  EXPECT_EQ((*samples)[1].timestamp_ms, 1700000000000);
}

struct ValueCase {
  std::string text;
  double expected;
};

TEST(TextFormat, ParsesEveryValueSpelling) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const ValueCase& c :
       {ValueCase{"1", 1.0}, ValueCase{"-2.5", -2.5}, ValueCase{"+3", 3.0}, ValueCase{"1e-3", 1e-3},
        ValueCase{"1.5E+2", 150.0}, ValueCase{"+Inf", inf}, ValueCase{"-Inf", -inf},
        ValueCase{"Inf", inf}}) {
    EXPECT_EQ(ParseOne("m " + c.text).value, c.expected) << c.text;
  }
  EXPECT_TRUE(std::isnan(ParseOne("m NaN").value));
  EXPECT_TRUE(std::isnan(ParseOne("m nan").value));
}

TEST(TextFormat, UnescapesLabelValues) {
  Sample sample = ParseOne(R"(m{a="back\\slash",b="quote\"d",c="new\nline",d="",e="x=1,y}"} 7)");
  EXPECT_THAT(sample.labels,
              ElementsAre(Pair("a", "back\\slash"), Pair("b", "quote\"d"), Pair("c", "new\nline"),
                          Pair("d", ""), Pair("e", "x=1,y}")));
}

TEST(TextFormat, AcceptsBlanksAndTrailingComma) {
  Sample sample = ParseOne("name:with:colons { a = \"1\" , b=\"2\", }\t4\t-5");
  EXPECT_EQ(sample.name, "name:with:colons");
  EXPECT_THAT(sample.labels, ElementsAre(Pair("a", "1"), Pair("b", "2")));
  EXPECT_EQ(sample.value, 4.0);
  EXPECT_EQ(sample.timestamp_ms, -5);
}

TEST(TextFormat, AcceptsEmptyLabelSet) { EXPECT_TRUE(ParseOne("m{} 1").labels.empty()); }

struct BadCase {
  std::string text;
  std::string message;
};

TEST(TextFormat, RejectsMalformedLinesNamingTheLine) {
  for (const BadCase& c : {
           BadCase{"m", "line 1: expected a blank and a value"},
           BadCase{"ok 1\nm abc", "line 2: invalid sample value 'abc'"},
           BadCase{"ok 1\n\nm{a=\"1\" 2", "line 3: expected ',' or '}'"},
           BadCase{"m{a=1} 2", "line 1: expected '\"' to open a label value"},
           BadCase{"m{a=\"1} 2", "line 1: unterminated label value"},
           BadCase{R"(m{a="\t"} 2)", R"(line 1: invalid escape '\t')"},
           BadCase{"m{a=\"1\",a=\"2\"} 2", "line 1: duplicate label 'a'"},
           BadCase{"m{1a=\"1\"} 2", "line 1: expected a label name or '}'"},
           BadCase{"m{a \"1\"} 2", "line 1: expected '=' after label name 'a'"},
           BadCase{"m 1 12.5", "line 1: invalid timestamp '12.5'"},
           BadCase{"m 1 2 3", "line 1: unexpected text after the timestamp"},
           BadCase{"m +-1", "line 1: invalid sample value '+-1'"},
           BadCase{"9m 1", "line 1: expected a metric name"},
           BadCase{"m-x 1", "line 1: expected a blank and a value after 'm'"},
           BadCase{"# TYPE m gauges", "line 1: unknown metric type 'gauges'"},
           BadCase{"# TYPE m gauge extra", "line 1: unexpected text after the metric type"},
           BadCase{"# HELP", "line 1: expected a metric name after # HELP"},
           BadCase{"# TYPE m-x gauge", "line 1: invalid character in metric name"},
       }) {
    StatusOr<std::vector<Sample>> samples = ParseTextFormat(c.text);
    ASSERT_FALSE(samples.ok()) << c.text;
    EXPECT_EQ(samples.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(samples.status().message(), HasSubstr(c.message)) << c.text;
  }
}

// An exposition of `count` lines made by `line(i)`.
template <typename Line>
std::string Lines(size_t count, Line line) {
  std::string text;
  for (size_t i = 0; i < count; ++i) text += line(i) + "\n";
  return text;
}

void ExpectOverCap(const std::string& text, const std::string& message) {
  StatusOr<std::vector<Sample>> samples = ParseTextFormat(text);
  ASSERT_FALSE(samples.ok());
  EXPECT_EQ(samples.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(samples.status().message(), HasSubstr(message));
}

TEST(TextFormat, ALineOverSixtyFourKiBFailsNamingTheCap) {
  std::string at_cap = "# " + std::string(kMaxLineBytes - 2, 'x');
  EXPECT_TRUE(ParseTextFormat("m 1\n" + at_cap + "\n").ok());
  ExpectOverCap("m 1\n" + at_cap + "x\n",
                "metrics line 2: longer than the cap of 65536 bytes on one line");
}

TEST(TextFormat, MoreThanTenThousandSamplesFailNamingTheCap) {
  auto line = [](size_t i) { return "m" + std::to_string(i) + " 1"; };
  StatusOr<std::vector<Sample>> at_cap = ParseTextFormat(Lines(kMaxSamples, line));
  ASSERT_TRUE(at_cap.ok()) << at_cap.status().message();
  EXPECT_EQ(at_cap->size(), 10'000u);
  ExpectOverCap(Lines(kMaxSamples + 1, line),
                "metrics line 10001: more than the cap of 10000 samples");
}

TEST(TextFormat, AFloodOfLabelSetsOfOneMetricFailsNamingTheCap) {
  auto line = [](size_t i) { return "m{flood=\"" + std::to_string(i) + "\"} 1"; };
  EXPECT_TRUE(ParseTextFormat(Lines(kMaxLabelSetsPerMetric, line)).ok());
  ExpectOverCap("other 1\n" + Lines(kMaxLabelSetsPerMetric + 1, line),
                "metrics line 1002: more than the cap of 1000 label sets of metric 'm'");
}

TEST(TextFormat, AFloodOfLabelsOnOneSampleFailsNamingTheCap) {
  auto labels = [](size_t count) {
    std::string text = "m{";
    for (size_t i = 0; i < count; ++i) text += "l" + std::to_string(i) + "=\"v\",";
    return text + "} 1";
  };
  EXPECT_TRUE(ParseTextFormat(labels(kMaxLabelsPerSample)).ok());
  ExpectOverCap(labels(kMaxLabelsPerSample + 1),
                "metrics line 1: 65 labels, over the cap of 64 labels per sample");
}

TEST(TextFormat, ErrorsQuoteAShortPrintableExcerpt) {
  StatusOr<std::vector<Sample>> samples =
      ParseTextFormat("m " + std::string(60'000, '7') + "\x01x");
  ASSERT_FALSE(samples.ok());
  EXPECT_LT(samples.status().message().size(), 100u) << samples.status().message();
  EXPECT_EQ(Excerpt("a\x01\"b"), "a\\x01\"b");
  EXPECT_EQ(Excerpt(std::string(41, 'z')), std::string(40, 'z') + "...");
}

TEST(TextFormat, EmptyInputHasNoSamples) {
  StatusOr<std::vector<Sample>> samples = ParseTextFormat("\n\n# only comments\n");
  ASSERT_TRUE(samples.ok());
  EXPECT_TRUE(samples->empty());
}

}  // namespace
}  // namespace bsw::prom
