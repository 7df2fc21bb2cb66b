#include "operator/collect/line_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace bsw::collect {
namespace {

using Values = std::map<SeriesKey, double>;

LineParser MakeParser(ParserOptions options) {
  std::string error;
  std::optional<LineParser> parser = LineParser::Create(std::move(options), &error);
  EXPECT_TRUE(parser.has_value()) << error;
  return std::move(*parser);
}

ParserOptions Objective(std::string resource_key = "") {
  ParserOptions options;
  options.objective = "accuracy";
  options.resource_key = std::move(resource_key);
  return options;
}

struct Row {
  const char* name;
  ParserOptions options;
  std::vector<std::string> lines;
  Values values;
  double resource_completed;
};

class LineParserRows : public ::testing::TestWithParam<Row> {};

TEST_P(LineParserRows, RecordsEachValueAtItsResource) {
  LineParser parser = MakeParser(GetParam().options);
  for (const std::string& line : GetParam().lines) parser.Feed(line);
  EXPECT_EQ(parser.values(), GetParam().values);
  EXPECT_EQ(parser.resource_completed(), GetParam().resource_completed);
}

ParserOptions Json(std::string resource_key) {
  ParserOptions options = Objective(std::move(resource_key));
  options.format = LineFormat::kJson;
  return options;
}

ParserOptions Filter(std::string filter) {
  ParserOptions options = Objective();
  options.filter = std::move(filter);
  return options;
}

INSTANTIATE_TEST_SUITE_P(
    Rows, LineParserRows,
    ::testing::Values(
        Row{"WithoutKey_ObjectiveLinesCountTheResourceFromOne",
            Objective(),
            {"accuracy=0.5 loss=2", "accuracy=0.7 loss=1"},
            {{{"accuracy", 1}, 0.5}, {{"loss", 1}, 2}, {{"accuracy", 2}, 0.7}, {{"loss", 2}, 1}},
            2},
        Row{"WithoutKey_OtherValuesAreAtTheCountSoFar",
            Objective(),
            {"loss=3", "accuracy=0.5", "loss=2"},
            {{{"loss", 0}, 3}, {{"accuracy", 1}, 0.5}, {{"loss", 1}, 2}},
            1},
        Row{"WithoutKey_AnInvalidObjectiveDoesNotCount",
            Objective(),
            {"accuracy=nan", "accuracy=0.5"},
            {{{"accuracy", 1}, 0.5}},
            1},
        Row{"WithKey_ValuesAreAtTheKeysResourceAndTheKeyIsNotRecorded",
            Objective("epoch"),
            {"epoch=0 accuracy=0.1", "epoch=3 accuracy=0.9 loss=0.2"},
            {{{"accuracy", 0}, 0.1}, {{"accuracy", 3}, 0.9}, {{"loss", 3}, 0.2}},
            3},
        Row{"WithKey_LinesWithoutTheKeyOrWithANegativeKeyAreIgnored",
            Objective("epoch"),
            {"accuracy=0.5", "epoch=-1 accuracy=0.6", "epoch=x accuracy=0.7"},
            {},
            0},
        Row{"TheFirstValueAtAResourceWins",
            Objective("epoch"),
            {"epoch=1 accuracy=0.5", "epoch=1 accuracy=0.9"},
            {{{"accuracy", 1}, 0.5}},
            1},
        Row{"BadNamesAndValuesAreSkipped",
            Objective("epoch"),
            {"epoch=1 a|b=1 accuracy=inf loss=-", "epoch=2 1x=3 accuracy=0.25"},
            {{{"accuracy", 2}, 0.25}},
            2},
        Row{"NonIntegerResourcesAreKept",
            Objective("epoch"),
            {"epoch=0.5 accuracy=0.5"},
            {{{"accuracy", 0.5}, 0.5}},
            0.5},
        Row{"JsonLinesGiveNumbersAndNumericStrings",
            Json("epoch"),
            {R"({"epoch": 2, "accuracy": "0.75", "tag": "x", "nested": {"loss": 1}})", "epoch=3"},
            {{{"accuracy", 2}, 0.75}},
            2},
        Row{"ACustomFilterNamesAndValuesByItsFirstTwoGroups",
            Filter(R"((\w+):\s*([0-9.]+))"),
            {"accuracy: 0.5 loss: 1.5", "accuracy=0.9"},
            {{{"accuracy", 1}, 0.5}, {{"loss", 1}, 1.5}},
            1}),
    [](const ::testing::TestParamInfo<Row>& row) { return std::string(row.param.name); });

TEST(LineParser, KeepsAtMostMaxValuesAndReportsTheDropped) {
  ParserOptions options = Objective();
  options.max_values = 3;
  LineParser parser = MakeParser(options);
  EXPECT_EQ(parser.Feed("accuracy=1 loss=1").kept, 2);
  LineOutcome outcome = parser.Feed("accuracy=2 loss=2");
  EXPECT_EQ(outcome.kept, 1);
  EXPECT_EQ(outcome.dropped, 1);
  EXPECT_EQ(parser.values().size(), 3u);
  EXPECT_EQ(parser.resource_completed(), 2);
}

TEST(LineParser, IgnoresLinesLongerThanItsLimit) {
  LineParser parser = MakeParser(Filter(R"((\w+)=(\d+))"));
  EXPECT_EQ(parser.max_line_bytes(), kMaxFilteredLineBytes);
  EXPECT_EQ(parser.Feed("accuracy=1 " + std::string(kMaxFilteredLineBytes, ' ')).kept, 0);
  EXPECT_EQ(MakeParser(Objective()).max_line_bytes(), kMaxLineBytes);
}

struct BadFilterRow {
  const char* filter;
  const char* error_part;
};

class LineParserBadFilter : public ::testing::TestWithParam<BadFilterRow> {};

TEST_P(LineParserBadFilter, IsRefusedWithAnErrorNamingFilter) {
  std::string error;
  EXPECT_FALSE(LineParser::Create(Filter(GetParam().filter), &error).has_value());
  EXPECT_THAT(error, ::testing::HasSubstr("--filter="));
  EXPECT_THAT(error, ::testing::HasSubstr(GetParam().error_part));
}

INSTANTIATE_TEST_SUITE_P(Rows, LineParserBadFilter,
                         ::testing::Values(BadFilterRow{"(unclosed", "not a regular expression"},
                                           BadFilterRow{"(\\w+)=\\d+", "has 1"}));

}  // namespace
}  // namespace bsw::collect
