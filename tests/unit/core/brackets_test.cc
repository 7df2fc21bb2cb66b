#include "operator/core/brackets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// How many trials of one cycle each bracket gets.
std::vector<int> BracketSizes(const std::vector<int>& cycle) {
  std::vector<int> sizes(static_cast<size_t>(*std::max_element(cycle.begin(), cycle.end()) + 1));
  for (int b : cycle) ++sizes[static_cast<size_t>(b)];
  return sizes;
}

struct CycleRow {
  int rungs;
  int eta;
  std::vector<int> sizes;  // n_b, from Li et al. (2018)
};

TEST(HyperbandCycle, DealsTrialsInHyperbandsBracketSizes) {
  const std::vector<CycleRow> rows = {
      {5, 3, {81, 34, 15, 8, 5}},  // the paper's Table 1 (R = 81, η = 3)
      {4, 3, {27, 12, 6, 4}},      // rungs 1, 3, 9, 27
      {5, 2, {16, 10, 7, 5, 5}},
      {2, 3, {3, 2}},
  };
  for (const CycleRow& row : rows) {
    std::vector<int> cycle = HyperbandCycle(row.rungs, row.eta);
    EXPECT_THAT(BracketSizes(cycle), ElementsAreArray(row.sizes))
        << row.rungs << " rungs, eta " << row.eta;
  }
}

TEST(HyperbandCycle, InterleavesTheBracketsSoEachIsServedFromTheFirstTrials) {
  std::vector<int> cycle = HyperbandCycle(4, 3);
  const std::vector<double> share = {27 / 49.0, 12 / 49.0, 6 / 49.0, 4 / 49.0};
  std::vector<int> dealt(4, 0);
  for (size_t k = 0; k < cycle.size(); ++k) {
    ++dealt[static_cast<size_t>(cycle[k])];
    for (size_t b = 0; b < 4; ++b) {
      EXPECT_LE(std::fabs(dealt[b] - share[b] * static_cast<double>(k + 1)), 1.0)
          << "bracket " << b << " after " << k + 1 << " trials";
    }
  }
  // The smallest bracket gets its first trial within the first 49 / 4 trials, not at the end.
  EXPECT_LT(std::find(cycle.begin(), cycle.end(), 3) - cycle.begin(), 13);
}

TEST(HyperbandCycle, ScalesDownLongCyclesKeepingEveryBracket) {
  std::vector<int> cycle = HyperbandCycle(12, 3);  // 3^11 = 177,147 trials in bracket 0 alone
  EXPECT_LE(cycle.size(), kMaxHyperbandCycle);
  std::vector<int> sizes = BracketSizes(cycle);
  ASSERT_EQ(sizes.size(), 12u);
  EXPECT_GE(*std::min_element(sizes.begin(), sizes.end()), 1);
  EXPECT_TRUE(std::is_sorted(sizes.rbegin(), sizes.rend()));  // bracket 0 still the largest
}

SweepSpec Spec(const char* algorithm, const char* mode) {
  return testing::SpecWith([&](nlohmann::json& j) {
    j["spec"]["scheduler"]["algorithm"] = algorithm;
    j["spec"]["scheduler"]["mode"] = mode;
  });
}

// The first `n` trial indexes of bracket `bracket`.
std::vector<int64_t> TrialsOf(const Brackets& brackets, int bracket, int n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; static_cast<int>(out.size()) < n; ++i) {
    if (brackets.BracketOf(i) == bracket) out.push_back(i);
  }
  return out;
}

TEST(Brackets, AshaIsOneBracketStartingAtTheFirstRung) {
  Brackets asha(Spec("asha", "stop"), 3);
  EXPECT_EQ(asha.count(), 1);
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(asha.BracketOf(i), 0);
}

TEST(Brackets, HyperbandHasOneBracketPerRung) {
  Brackets hyperband(Spec("hyperband", "stop"), 3);
  EXPECT_EQ(hyperband.count(), 4);
  std::vector<int> first_cycle;
  for (int64_t i = 0; i < 49; ++i) first_cycle.push_back(hyperband.BracketOf(i));
  EXPECT_THAT(BracketSizes(first_cycle), ElementsAre(27, 12, 6, 4));
  EXPECT_EQ(hyperband.BracketOf(49), hyperband.BracketOf(0));
}

TEST(Brackets, HyperbandKeepsAtMostThirtyTwoBracketsHoweverManyRungs) {
  // min 2^-14 and max 2^49 with η 2: 64 rungs, the most a sweep may have.
  SweepSpec spec = testing::SpecWith([](nlohmann::json& j) {
    j["spec"]["scheduler"]["algorithm"] = "hyperband";
    j["spec"]["resource"] = {{"min", 0x1p-14}, {"max", 0x1p49}, {"reductionFactor", 2}};
  });
  Rungs rungs(spec);
  ASSERT_EQ(rungs.size(), kMaxRungs);
  Brackets hyperband(spec, rungs.size() - 1);
  EXPECT_EQ(hyperband.count(), kMaxHyperbandBrackets);
  int highest = 0;
  for (int64_t i = 0; i < 4096; ++i) highest = std::max(highest, hyperband.BracketOf(i));
  EXPECT_EQ(highest, kMaxHyperbandBrackets - 1);
  // The last bracket judges its trials from its rung on, like any other.
  int64_t last = TrialsOf(hyperband, kMaxHyperbandBrackets - 1, 1)[0];
  EXPECT_EQ(hyperband.Record(last, kMaxHyperbandBrackets - 2, 0.5), std::nullopt);
  EXPECT_EQ(hyperband.Record(last, kMaxHyperbandBrackets - 1, 0.5), std::optional<bool>(true));
}

TEST(Brackets, CountTheTrialsOfEachBracketAsBracketOfDealsThem) {
  Brackets hyperband(Spec("hyperband", "stop"), 3);
  for (int64_t trials : {0, 1, 13, 49, 50, 1000}) {
    std::vector<int64_t> counted(4, 0);
    for (int64_t i = 0; i < trials; ++i) ++counted[static_cast<size_t>(hyperband.BracketOf(i))];
    for (int b = 0; b < 4; ++b) {
      EXPECT_EQ(hyperband.TrialsIn(b, trials), counted[static_cast<size_t>(b)])
          << "bracket " << b << " of " << trials << " trials";
    }
  }
}

TEST(BracketsStopMode, ATrialIsNotJudgedBelowItsBracketsFirstRungNorAtTheLast) {
  Brackets hyperband(Spec("hyperband", "stop"), 3);
  int64_t second = TrialsOf(hyperband, 2, 1)[0];
  EXPECT_EQ(hyperband.Record(second, 0, 0.1), std::nullopt);
  EXPECT_EQ(hyperband.Record(second, 1, 0.1), std::nullopt);
  EXPECT_EQ(hyperband.Record(second, 2, 0.1), std::optional<bool>(true));
  EXPECT_EQ(hyperband.Record(second, 3, 0.1), std::nullopt);  // the full resource decides nothing
  EXPECT_EQ(hyperband.recorded(0), 0);
  EXPECT_EQ(hyperband.recorded(2), 1);
}

TEST(BracketsStopMode, ATrialIsJudgedOnlyAgainstItsOwnBracket) {
  Brackets hyperband(Spec("hyperband", "stop"), 3);
  // Three bracket-0 trials reach rung 1 with high values: the worst of them is cut there.
  std::vector<int64_t> b0 = TrialsOf(hyperband, 0, 3);
  EXPECT_EQ(hyperband.Record(b0[0], 1, 0.90), std::optional<bool>(true));
  EXPECT_EQ(hyperband.Record(b0[1], 1, 0.80), std::optional<bool>(false));
  EXPECT_EQ(hyperband.Record(b0[2], 1, 0.85), std::optional<bool>(false));
  // A bracket-1 trial's first value at rung 1, far below them, is the best of its bracket.
  std::vector<int64_t> b1 = TrialsOf(hyperband, 1, 2);
  EXPECT_EQ(hyperband.Record(b1[0], 1, 0.30), std::optional<bool>(true));
  EXPECT_EQ(hyperband.Record(b1[1], 1, 0.20), std::optional<bool>(false));
  EXPECT_EQ(hyperband.recorded(1), 5);
  // What each bracket said when the value arrived, beside how many values it had then.
  EXPECT_EQ(hyperband.ArrivalOf(b1[1], 1)->values, 2);
  EXPECT_FALSE(hyperband.ArrivalOf(b1[1], 1)->in_top);
  EXPECT_EQ(hyperband.ArrivalOf(b0[1], 1)->values, 2);
  EXPECT_EQ(hyperband.ArrivalOf(b0[2], 1)->values, 3);
  EXPECT_EQ(hyperband.ArrivalOf(b1[0], 0), std::nullopt) << "bracket 1 does not judge rung 0";
  EXPECT_EQ(hyperband.ArrivalOf(b1[0], 2), std::nullopt) << "no value there";
}

TEST(BracketsPauseMode, CandidatesComeFromTheHighestRungFirstAcrossBrackets) {
  Brackets hyperband(Spec("hyperband", "pause"), 3);
  std::vector<int64_t> b0 = TrialsOf(hyperband, 0, 3);
  std::vector<int64_t> b1 = TrialsOf(hyperband, 1, 3);
  // Bracket 0 at rung 0: the top 1/3 of three values is one promotion.
  ASSERT_TRUE(hyperband.Record(b0[0], 0, 0.5).has_value());
  ASSERT_TRUE(hyperband.Record(b0[1], 0, 0.9).has_value());
  ASSERT_TRUE(hyperband.Record(b0[2], 0, 0.6).has_value());
  // Bracket 1 starts at rung 1: one promotion there too.
  ASSERT_TRUE(hyperband.Record(b1[0], 1, 0.4).has_value());
  ASSERT_TRUE(hyperband.Record(b1[1], 1, 0.7).has_value());
  ASSERT_TRUE(hyperband.Record(b1[2], 1, 0.3).has_value());

  std::vector<Brackets::Promotion> candidates = hyperband.Candidates(5);
  ASSERT_EQ(candidates.size(), 2u);
  EXPECT_EQ(candidates[0].trial, b1[1]);
  EXPECT_EQ(candidates[0].rung, 1);  // the sweep's rung, not the bracket's
  EXPECT_EQ(candidates[1].trial, b0[1]);
  EXPECT_EQ(candidates[1].rung, 0);
  ASSERT_TRUE(hyperband.Leader().has_value());
  EXPECT_EQ(hyperband.Leader()->trial, b1[1]);

  hyperband.MarkPromoted(b1[1], 1);
  EXPECT_EQ(hyperband.promoted(1), 1);
  EXPECT_EQ(hyperband.Leader()->trial, b1[0]);  // the leader ignores the quota
  candidates = hyperband.Candidates(5);
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0].trial, b0[1]);
}

TEST(BracketsPauseMode, LeaderAtOneRungIsTheBestValueOfEveryBracketThere) {
  Brackets hyperband(Spec("hyperband", "pause"), 3);
  int64_t from_b0 = TrialsOf(hyperband, 0, 1)[0];
  int64_t from_b1 = TrialsOf(hyperband, 1, 1)[0];
  ASSERT_TRUE(hyperband.Record(from_b0, 1, 0.6).has_value());
  ASSERT_TRUE(hyperband.Record(from_b1, 1, 0.8).has_value());
  ASSERT_TRUE(hyperband.Leader().has_value());
  EXPECT_EQ(hyperband.Leader()->trial, from_b1);
  hyperband.Withdraw(from_b1);
  EXPECT_EQ(hyperband.Leader()->trial, from_b0);
}

}  // namespace
}  // namespace bsw
