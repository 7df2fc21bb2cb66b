#include "operator/collect/pair_scanner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace bsw::collect {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Lines on which the hand-written default scanner must find what std::regex finds.
const char* const kLines[] = {
    "epoch=3 accuracy=0.91 loss=0.22",
    "epoch = 3, accuracy= .5 loss =-1e-3",
    "a=b=1",
    "a= b=1",
    "x=1.5.6=3",
    "lr=+2E+5 m=1e m2=1e+ m3=-. m4=.",
    "no pairs at all",
    "name-with|bars=7 under_score=8",
    "tab\t=\t9\r",
    "===== a==1",
    "trailing=",
    "é=1 ü2=3",
    "",
    "a=1b=2c",
    "loss=nan acc=inf",
};

class DefaultScannerMatchesRegex : public ::testing::TestWithParam<const char*> {};

TEST_P(DefaultScannerMatchesRegex, FindsTheSamePairs) {
  std::regex filter(kDefaultFilter);
  EXPECT_EQ(ScanDefaultFilter(GetParam()), ScanFilter(filter, GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Lines, DefaultScannerMatchesRegex, ::testing::ValuesIn(kLines));

TEST(ScanDefaultFilter, Scans64KiBTokenWithoutRecursionOrBacktracking) {
  std::string line(64 * 1024, 'a');
  EXPECT_THAT(ScanDefaultFilter(line), IsEmpty());
  EXPECT_THAT(ScanDefaultFilter(line + "=2"), ElementsAre(RawPair{line, "2"}));
}

TEST(ScanFilter, UsesTheFirstTwoGroups) {
  std::regex filter(R"(([a-z]+):\s*(\S+))");
  EXPECT_THAT(ScanFilter(filter, "acc: 0.5 loss: 2"),
              ElementsAre(RawPair{"acc", "0.5"}, RawPair{"loss", "2"}));
}

struct JsonRow {
  const char* line;
  std::vector<RawPair> pairs;
};

class ScanJsonObjectRows : public ::testing::TestWithParam<JsonRow> {};

TEST_P(ScanJsonObjectRows, FindsNumbersAndNumericStrings) {
  EXPECT_EQ(ScanJsonObject(GetParam().line), GetParam().pairs);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, ScanJsonObjectRows,
    ::testing::Values(JsonRow{R"({"epoch": 2, "acc": 0.5})", {{"acc", "0.5"}, {"epoch", "2"}}},
                      JsonRow{R"({"acc": "0.25", "note": "hi"})",
                              {{"acc", "0.25"}, {"note", "hi"}}},
                      JsonRow{R"({"a": true, "b": null, "c": [1], "d": {"e": 1}})", {}},
                      JsonRow{R"([1, 2])", {}}, JsonRow{"not json", {}},
                      JsonRow{R"({"a": 1)", {}}));

struct ValueRow {
  const char* text;
  std::optional<double> value;
};

class FiniteValueRows : public ::testing::TestWithParam<ValueRow> {};

TEST_P(FiniteValueRows, AcceptsOnlyAWholeFiniteNumber) {
  EXPECT_EQ(FiniteValue(GetParam().text), GetParam().value);
}

INSTANTIATE_TEST_SUITE_P(
    Rows, FiniteValueRows,
    ::testing::Values(ValueRow{"0.91", 0.91}, ValueRow{"+2", 2.0}, ValueRow{"-1e-3", -1e-3},
                      ValueRow{".5", 0.5}, ValueRow{"", std::nullopt}, ValueRow{"+", std::nullopt},
                      ValueRow{"+-1", std::nullopt}, ValueRow{"nan", std::nullopt},
                      ValueRow{"inf", std::nullopt}, ValueRow{"1e999", std::nullopt},
                      ValueRow{"3x", std::nullopt}, ValueRow{" 3", std::nullopt}));

TEST(IsMetricName, AcceptsPrometheusLikeNamesUpTo128Bytes) {
  EXPECT_TRUE(IsMetricName("val_acc:top-1.5"));
  EXPECT_TRUE(IsMetricName(std::string(128, 'a')));
  EXPECT_FALSE(IsMetricName(std::string(129, 'a')));
  EXPECT_FALSE(IsMetricName("1abc"));
  EXPECT_FALSE(IsMetricName("a|b"));
  EXPECT_FALSE(IsMetricName(""));
}

}  // namespace
}  // namespace bsw::collect
