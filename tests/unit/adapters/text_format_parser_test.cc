#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "operator/adapters/prometheus/text_format.h"

namespace bsw::prom {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// What a parse gave: the samples it handed over and how it ended.
struct Parse {
  std::vector<Sample> samples;
  Status status;
};

// Parses `text` fed to a TextFormatParser in pieces of `piece_bytes`.
Parse ParseInPieces(std::string_view text, size_t piece_bytes) {
  Parse parse;
  TextFormatParser parser([&parse](Sample sample) { parse.samples.push_back(std::move(sample)); });
  for (size_t at = 0; at < text.size() && parse.status.ok(); at += piece_bytes) {
    parse.status = parser.Feed(text.substr(at, piece_bytes));
  }
  if (parse.status.ok()) parse.status = parser.Finish();
  return parse;
}

void ExpectSameSample(const Sample& actual, const Sample& expected) {
  EXPECT_EQ(actual.name, expected.name);
  EXPECT_EQ(actual.labels, expected.labels);
  EXPECT_TRUE(actual.value == expected.value ||
              (std::isnan(actual.value) && std::isnan(expected.value)));
  EXPECT_EQ(actual.timestamp_ms, expected.timestamp_ms);
}

// Expects `text` fed in pieces of `piece_bytes` to parse as it does in one piece.
void ExpectSameAsOnePiece(const std::string& text, size_t piece_bytes) {
  SCOPED_TRACE("pieces of " + std::to_string(piece_bytes) + " bytes of: " + Excerpt(text));
  const Parse whole = ParseInPieces(text, text.size() + 1);
  const Parse pieces = ParseInPieces(text, piece_bytes);
  EXPECT_EQ(pieces.status.code(), whole.status.code());
  EXPECT_EQ(pieces.status.message(), whole.status.message());
  ASSERT_EQ(pieces.samples.size(), whole.samples.size());
  for (size_t i = 0; i < whole.samples.size(); ++i) {
    ExpectSameSample(pieces.samples[i], whole.samples[i]);
  }
}

TEST(TextFormatParser, PiecesOfEverySizeParseAsOnePiece) {
  const std::vector<std::string> texts = {
      "# HELP budgetsweep_trainer_loss Training loss.\n"
      "# TYPE budgetsweep_trainer_loss gauge\n"
      "\n"
      "budgetsweep_trainer_loss{sweep=\"s\",trial=\"t1\"} 0.25\n"
      "m{a=\"back\\\\slash\",b=\"quote\\\"d\",c=\"new\\nline\",} NaN 1700000000000\n"
      "  \t\n"
      "up -Inf",
      "ok 1\n\nm{a=\"1\" 2\nnever 3\n",
      "ok 1\nm abc",
      "m{a=\"1\",a=\"2\"} 2\n",
      "# TYPE m gauges\nok 1\n",
      "\n\n# only comments\n",
      "",
  };
  for (const std::string& text : texts) {
    for (size_t piece_bytes = 1; piece_bytes <= text.size(); ++piece_bytes) {
      ExpectSameAsOnePiece(text, piece_bytes);
    }
  }
}

// An exposition of `count` lines made by `line(i)`.
template <typename Line>
std::string Lines(size_t count, Line line) {
  std::string text;
  for (size_t i = 0; i < count; ++i) text += line(i) + "\n";
  return text;
}

TEST(TextFormatParser, CapsCountAcrossPieces) {
  const std::vector<std::string> texts = {
      Lines(kMaxSamples + 1, [](size_t i) { return "m" + std::to_string(i) + " 1"; }),
      "other 1\n" + Lines(kMaxLabelSetsPerMetric + 1,
                          [](size_t i) { return "m{flood=\"" + std::to_string(i) + "\"} 1"; }),
      "m 1\n# " + std::string(kMaxLineBytes - 1, 'x') + "\nm 2\n",
  };
  for (const std::string& text : texts) {
    ASSERT_EQ(ParseInPieces(text, text.size()).status.code(), StatusCode::kResourceExhausted);
    for (size_t piece_bytes : {size_t{1}, size_t{7}, size_t{4096}, kMaxLineBytes + 3}) {
      ExpectSameAsOnePiece(text, piece_bytes);
    }
  }
}

TEST(TextFormatParser, ALineSplitAcrossPiecesIsParsedOnceItEnds) {
  std::vector<Sample> samples;
  TextFormatParser parser([&samples](Sample sample) { samples.push_back(std::move(sample)); });
  ASSERT_TRUE(parser.Feed("budgetsweep_trai").ok());
  ASSERT_TRUE(parser.Feed("ner_loss{sweep=\"s\"} 0").ok());
  EXPECT_THAT(samples, IsEmpty());
  ASSERT_TRUE(parser.Feed(".25\nup 1").ok());
  ASSERT_THAT(samples, SizeIs(1));
  EXPECT_EQ(samples[0].name, "budgetsweep_trainer_loss");
  EXPECT_EQ(samples[0].value, 0.25);
  ASSERT_TRUE(parser.Finish().ok());
  ASSERT_THAT(samples, SizeIs(2));
  EXPECT_EQ(samples[1].name, "up");
}

TEST(TextFormatParser, APartialLineOverTheCapFailsAsAWholeOneDoes) {
  const std::string message = "metrics line 2: longer than the cap of 65536 bytes on one line";
  TextFormatParser parser([](Sample) {});
  ASSERT_TRUE(parser.Feed("m 1\n# ").ok());
  ASSERT_TRUE(parser.Feed(std::string(kMaxLineBytes - 2, 'x')).ok());  // at the cap
  Status over = parser.Feed("x");
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(over.message(), message);

  StatusOr<std::vector<Sample>> whole =
      ParseTextFormat("m 1\n# " + std::string(kMaxLineBytes - 1, 'x') + "\n");
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.status().message(), message);
}

TEST(TextFormatParser, APartialLineAtTheCapParsesOnceItEnds) {
  TextFormatParser parser([](Sample) {});
  ASSERT_TRUE(parser.Feed("# " + std::string(kMaxLineBytes - 2, 'x')).ok());
  EXPECT_TRUE(parser.Feed("\nm 1\n").ok());
  EXPECT_TRUE(parser.Finish().ok());
}

TEST(TextFormatParser, ALastLineWithoutANewlineFailsAtFinish) {
  TextFormatParser parser([](Sample) {});
  ASSERT_TRUE(parser.Feed("ok 1\nm ab").ok());
  Status finished = parser.Finish();
  EXPECT_EQ(finished.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(finished.message(), HasSubstr("line 2: invalid sample value 'ab'"));
}

}  // namespace
}  // namespace bsw::prom
