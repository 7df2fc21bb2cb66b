#include "operator/core/asha.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace bsw {
namespace {

using ::testing::ElementsAre;

TEST(Rungs, SitAtMinTimesEtaToTheKUpToMax) {
  EXPECT_THAT(Rungs(1, 27, 3).milestones(), ElementsAre(1, 3, 9, 27));
  EXPECT_THAT(Rungs(1, 16, 2).milestones(), ElementsAre(1, 2, 4, 8, 16));
  EXPECT_THAT(Rungs(2, 18, 3).milestones(), ElementsAre(2, 6, 18));
}

TEST(Rungs, EndAtMaxWhenMaxIsNoPowerOfEta) {
  EXPECT_THAT(Rungs(1, 20, 3).milestones(), ElementsAre(1, 3, 9, 20));
  EXPECT_THAT(Rungs(1, 2, 3).milestones(), ElementsAre(1, 2));
  EXPECT_THAT(Rungs(1, 28, 3).milestones(), ElementsAre(1, 3, 9, 27, 28));
}

TEST(Rungs, AbsorbFloatingPointRoundingOfFractionalMilestones) {
  Rungs rungs(0.1, 8.1, 3);
  ASSERT_EQ(rungs.size(), 5);
  EXPECT_DOUBLE_EQ(rungs.at(1), 0.3);
  EXPECT_EQ(rungs.IndexOf(0.3), 1);
  EXPECT_EQ(rungs.IndexOf(8.1), 4);
}

TEST(Rungs, FindMilestonesAndTheNextOne) {
  Rungs rungs(1, 27, 3);
  EXPECT_EQ(rungs.IndexOf(9), 2);
  EXPECT_EQ(rungs.IndexOf(5), -1);
  EXPECT_DOUBLE_EQ(rungs.NextAfter(0), 1);
  EXPECT_DOUBLE_EQ(rungs.NextAfter(3), 9);
  EXPECT_DOUBLE_EQ(rungs.NextAfter(4.5), 9);
  EXPECT_DOUBLE_EQ(rungs.NextAfter(27), 27);
  EXPECT_DOUBLE_EQ(rungs.max(), 27);
}

TEST(AshaStopMode, FirstValueAtARungContinues) {
  AshaScheduler asha(3, 3, Goal::kMaximize);
  EXPECT_TRUE(asha.Record(0, 0, 0.1));
  EXPECT_TRUE(asha.Record(1, 1, 0.0));
}

TEST(AshaStopMode, WithFewerThanEtaValuesOnlyTheBestSoFarContinues) {
  AshaScheduler asha(3, 3, Goal::kMaximize);
  EXPECT_TRUE(asha.Record(0, 0, 0.5));
  EXPECT_FALSE(asha.Record(1, 0, 0.4));
  EXPECT_TRUE(asha.Record(2, 0, 0.6));
}

// A rung that already holds the values 0..29.
AshaScheduler WarmRung(Goal goal) {
  AshaScheduler asha(3, 3, goal);
  for (int64_t t = 0; t < 30; ++t) {
    double v = static_cast<double>((t * 7) % 30);  // a fixed shuffle of 0..29
    (void)asha.Record(t, 0, goal == Goal::kMaximize ? v : -v);
  }
  return asha;
}

TEST(AshaStopMode, KillsBottomTwoThirdsAtFirstRung) {
  int continued = 0;
  for (int i = 0; i < 30; ++i) {
    AshaScheduler asha = WarmRung(Goal::kMaximize);
    double value = i + 0.5;
    bool keep = asha.Record(100, 0, value);
    // 31 values: the top 10 are 29..21 and the new one when it beats 20.
    EXPECT_EQ(keep, value > 20) << value;
    continued += keep;
  }
  EXPECT_EQ(continued, 10);
}

TEST(AshaStopMode, MinimizeKeepsTheSmallestValues) {
  AshaScheduler asha = WarmRung(Goal::kMinimize);
  AshaScheduler copy = asha;
  EXPECT_TRUE(asha.Record(100, 0, -20.5));
  EXPECT_FALSE(copy.Record(100, 0, -19.5));
}

TEST(AshaStopMode, NanRanksBelowEveryNumber) {
  AshaScheduler asha(2, 2, Goal::kMinimize);
  EXPECT_TRUE(asha.Record(0, 0, 1e300));
  EXPECT_FALSE(asha.Record(1, 0, std::nan("")));
  EXPECT_FALSE(asha.Record(2, 0, std::nan("")));
  AshaScheduler first_nan(2, 2, Goal::kMaximize);
  EXPECT_TRUE(first_nan.Record(0, 0, std::nan("")));  // alone, even NaN is the best so far
  EXPECT_TRUE(first_nan.Record(1, 0, -1e300));
}

TEST(AshaStopMode, RecordingTheSameTrialAgainIsIdempotent) {
  AshaScheduler asha(3, 3, Goal::kMaximize);
  EXPECT_TRUE(asha.Record(0, 0, 0.9));
  EXPECT_FALSE(asha.Record(1, 0, 0.1));
  EXPECT_FALSE(asha.Record(1, 0, 5.0));  // a replayed or re-scraped value changes nothing
  EXPECT_TRUE(asha.Record(0, 0, -5.0));
  EXPECT_EQ(asha.recorded(0), 2);
}

TEST(AshaStopMode, RungsDecideIndependently) {
  AshaScheduler asha(2, 3, Goal::kMaximize);
  EXPECT_TRUE(asha.Record(0, 0, 0.9));
  EXPECT_TRUE(asha.Record(1, 1, 0.1));
  EXPECT_EQ(asha.recorded(0), 1);
  EXPECT_EQ(asha.recorded(1), 1);
}

// The reference semantics, computed naively: a value continues when it is among the top
// floor(n/η) of the n values at the rung, or is the best so far while n < η.
bool NaiveContinues(const std::vector<double>& scores_before, double score, int eta) {
  std::vector<double> all = scores_before;
  all.push_back(score);
  size_t k = all.size() / static_cast<size_t>(eta);
  size_t better = static_cast<size_t>(std::count_if(scores_before.begin(), scores_before.end(),
                                                    [&](double s) { return s > score; }));
  return k == 0 ? better == 0 : better < k;
}

RC_GTEST_PROP(AshaStopMode, AgreesWithTheNaiveTopFractionOnEveryArrival, ()) {
  const int eta = *rc::gen::inRange(2, 6);
  const auto values = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 1000));
  AshaScheduler asha(1, eta, Goal::kMaximize);
  std::vector<double> seen;
  for (size_t i = 0; i < values.size(); ++i) {
    // Ties are broken by trial index; distinct values keep the reference simple.
    double v = values[i] + static_cast<double>(i) * 1e-6;
    RC_ASSERT(asha.Record(static_cast<int64_t>(i), 0, v) == NaiveContinues(seen, v, eta));
    seen.push_back(v);
  }
}

TEST(AshaPauseMode, CandidatesComeFromTheHighestRungFirstBestFirst) {
  AshaScheduler asha(2, 3, Goal::kMaximize);
  for (int64_t t = 0; t < 9; ++t) (void)asha.Record(t, 0, static_cast<double>(t));
  for (int64_t t : {8, 7, 6}) {
    asha.MarkPromoted(t, 0);
    (void)asha.Record(t, 1, 10.0 - static_cast<double>(t));
  }
  std::vector<AshaScheduler::Promotion> c = asha.Candidates(10);
  ASSERT_EQ(c.size(), 1u);  // rung 1: floor(3/3) = 1, the best of 8, 7, 6 there is 6
  EXPECT_EQ(c[0].trial, 6);
  EXPECT_EQ(c[0].rung, 1);
  for (int64_t t = 9; t < 12; ++t) (void)asha.Record(t, 0, 100.0 + static_cast<double>(t));
  c = asha.Candidates(10);
  ASSERT_EQ(c.size(), 2u);  // rung 1 first; then rung 0, where floor(12/3) = 4 allows one more
  EXPECT_EQ(c[0].rung, 1);
  EXPECT_EQ(c[1].trial, 11);
  EXPECT_EQ(c[1].rung, 0);
  EXPECT_EQ(asha.Candidates(1).size(), 1u);
}

TEST(AshaPauseMode, NeverOffersMoreThanFloorNOverEtaPerRung) {
  AshaScheduler asha(1, 3, Goal::kMaximize);
  for (int64_t t = 0; t < 8; ++t) (void)asha.Record(t, 0, static_cast<double>(t));
  std::vector<AshaScheduler::Promotion> c = asha.Candidates(100);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].trial, 7);
  EXPECT_EQ(c[1].trial, 6);
  asha.MarkPromoted(7, 0);
  asha.MarkPromoted(6, 0);
  EXPECT_TRUE(asha.Candidates(100).empty());
  EXPECT_EQ(asha.promoted(0), 2);
}

TEST(AshaPauseMode, MarkPromotedIgnoresUnknownAndRepeatedTrials) {
  AshaScheduler asha(1, 2, Goal::kMaximize);
  (void)asha.Record(0, 0, 1.0);
  (void)asha.Record(1, 0, 2.0);
  asha.MarkPromoted(42, 0);
  asha.MarkPromoted(1, 0);
  asha.MarkPromoted(1, 0);
  EXPECT_EQ(asha.promoted(0), 1);
}

TEST(AshaPauseMode, WithdrawnTrialIsNeverOfferedButStillRanksTheOthers) {
  AshaScheduler asha(1, 3, Goal::kMaximize);
  for (int64_t t = 0; t < 6; ++t) (void)asha.Record(t, 0, static_cast<double>(t));
  asha.Withdraw(5);
  std::vector<AshaScheduler::Promotion> c = asha.Candidates(10);
  ASSERT_EQ(c.size(), 1u);  // floor(6/3) = 2 are on top, 5 and 4; only 4 may resume
  EXPECT_EQ(c[0].trial, 4);
  (void)asha.Record(6, 0, 10.0);  // the top set changes; the withdrawn trial stays out
  for (const AshaScheduler::Promotion& p : asha.Candidates(10)) EXPECT_NE(p.trial, 5);
}

TEST(AshaPauseMode, LeaderIsTheBestUnpromotedTrialOfTheHighestRungWhateverTheQuota) {
  AshaScheduler asha(2, 3, Goal::kMaximize);
  EXPECT_FALSE(asha.Leader().has_value());
  (void)asha.Record(0, 0, 1.0);
  (void)asha.Record(1, 0, 5.0);  // floor(2/3) = 0: nothing may be promoted, yet 1 leads
  ASSERT_TRUE(asha.Leader().has_value());
  EXPECT_TRUE(asha.Candidates(10).empty());
  EXPECT_EQ(asha.Leader()->trial, 1);
  EXPECT_EQ(asha.Leader()->rung, 0);
  (void)asha.Record(2, 0, 3.0);
  asha.MarkPromoted(1, 0);
  (void)asha.Record(1, 1, 0.5);  // a worse value, but at a higher rung
  EXPECT_EQ(asha.Leader()->trial, 1);
  EXPECT_EQ(asha.Leader()->rung, 1);
  asha.Withdraw(1);  // the top of rung 0 is promoted: the best of the rest leads
  EXPECT_EQ(asha.Leader()->trial, 2);
  EXPECT_EQ(asha.Leader()->rung, 0);
  asha.MarkPromoted(2, 0);
  EXPECT_EQ(asha.Leader()->trial, 0);
}

TEST(AshaStopMode, HasNoLeaderAsNothingIsEverResumed) {
  AshaScheduler asha(1, 3, Goal::kMaximize, AshaMode::kStop);
  (void)asha.Record(0, 0, 1.0);
  EXPECT_FALSE(asha.Leader().has_value());
}

TEST(AshaPauseMode, OverPromotionBug_RungPromotesAtMostFloorNOverEtaWhileBetterValuesArrive) {
  AshaScheduler asha(1, 3, Goal::kMaximize);
  int64_t trial = 0;
  for (double v : {1.0, 2.0, 3.0}) (void)asha.Record(trial++, 0, v);
  for (double v : {4.0, 5.0, 6.0, 7.0}) {
    for (const AshaScheduler::Promotion& p : asha.Candidates(10)) asha.MarkPromoted(p.trial, 0);
    (void)asha.Record(trial++, 0, v);  // each new value beats the promoted one
    EXPECT_LE(asha.promoted(0), asha.recorded(0) / 3) << "after " << asha.recorded(0);
  }
}

// Random asynchronous streams: new trials report at rung 0, promoted trials report at the next
// rung, and free workers take promotions in between.
RC_GTEST_PROP(AshaPauseMode, PromotedNeverExceedsCeilRecordedOverEta, ()) {
  const int eta = *rc::gen::inRange(2, 5);
  const int decision_rungs = *rc::gen::inRange(1, 4);
  const auto steps = *rc::gen::container<std::vector<std::pair<int, int>>>(
      rc::gen::pair(rc::gen::inRange(0, 3), rc::gen::inRange(0, 1000)));
  AshaScheduler asha(decision_rungs, eta, Goal::kMaximize);
  std::vector<std::pair<int64_t, int>> awaiting;  // promoted trials and the rung they will reach
  int64_t next_trial = 0;
  for (const auto& [op, value] : steps) {
    if (op == 0) {
      (void)asha.Record(next_trial++, 0, value);
    } else if (op == 1) {
      for (const AshaScheduler::Promotion& p : asha.Candidates(static_cast<size_t>(value % 4))) {
        asha.MarkPromoted(p.trial, p.rung);
        if (p.rung + 1 < decision_rungs) awaiting.emplace_back(p.trial, p.rung + 1);
      }
    } else if (!awaiting.empty()) {
      auto [trial, rung] = awaiting[static_cast<size_t>(value) % awaiting.size()];
      (void)asha.Record(trial, rung, value);
    }
    for (int r = 0; r < decision_rungs; ++r) {
      RC_ASSERT(asha.promoted(r) <= (asha.recorded(r) + eta - 1) / eta);
    }
  }
}

}  // namespace
}  // namespace bsw
