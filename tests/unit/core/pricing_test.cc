// decisions::Pricing: what new work costs, from the sweep's and each trial's measurements; and
// Pausing and FirstUntil, which say where a trial's first segment ends. Rows over one model whose
// trials measured their pace in different ways.
#include "operator/core/pricing.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw::decisions {
namespace {

using nlohmann::json;

// ValidSweepJson under random search (rungs at 1, 3, 9 and 27 epochs), with a grace period of
// 10 s and `gpus` devices a trial.
SweepSpec PricedSpec(int gpus = 1) {
  return testing::SpecWith([gpus](json& j) {
    j["spec"]["scheduler"]["algorithm"] = "random";
    j["spec"]["trial"]["gpus"] = gpus;
    j["spec"]["trial"]["template"]["spec"]["terminationGracePeriodSeconds"] = 10;
  });
}

// Trial 0 measured 30 s to epoch 1 and 50 s to epoch 3 in one segment: 20 s of start-up, then
// 10 s an epoch. Trial 1 measured 25 s to epoch 1 alone. Trial 2 measured 5 s to epoch 1, then
// went on from trial 0's checkpoint, and has measured nothing since. The sweep's slowest pace is
// 30 s an epoch (trial 0's first), its steepest marginal one 10 s.
class PricingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Measure(0, {{1, 30}, {3, 50}});
    Measure(1, {{1, 25}});
    Measure(2, {{1, 5}});
    Apply(event::TrialExploited{.trial = 2, .rung = 0, .donor = 0, .params = {}, .message = ""});
  }

  void Apply(const Event& e) { ASSERT_TRUE(model_.Apply(e).ok()) << EventToJson(e).dump(); }
  // Creates trial `trial` and launches it to epoch 9, recording (units, seconds) at each rung.
  void Measure(int64_t trial, const std::vector<std::pair<double, double>>& points) {
    Apply(event::TrialCreated{.trial = trial});
    Apply(event::SegmentLaunched{.trial = trial, .until = 9});
    for (const auto& [units, seconds] : points) {
      Apply(event::ValueRecorded{
          .trial = trial, .resource = units, .value = 0.5, .seconds = seconds, .units = units});
    }
  }

  SweepModel model_{PricedSpec()};
  PlannerOptions options_;
};

TEST_F(PricingTest, ASegmentTakesItsTrialsOwnPaceElseTheSweeps) {
  struct Row {
    const char* name;
    int64_t index;
    double units;
    std::optional<double> seconds;
  };
  const Row rows[] = {
      {"its own start-up and pace", 0, 6, 20 + 10 * 6},
      {"from its latest measurement at the sweep's marginal pace", 1, 6, 25 + 10 * 5},
      {"its donor's since the exploit", 2, 6, 20 + 10 * 6},
      {"a new trial at the sweep's slowest pace", 3, 6, 30 * 6},
  };
  const Pricing pricing(model_, options_);
  for (const Row& row : rows) {
    EXPECT_EQ(pricing.SegmentSeconds(row.index, row.units), row.seconds) << row.name;
  }
}

TEST_F(PricingTest, TheMarginalPaceIsTheTrialsOwnElseTheSweeps) {
  const Pricing pricing(model_, options_);
  EXPECT_EQ(pricing.MarginalPace(model_.trial(0)), 10);
  EXPECT_EQ(pricing.MarginalPace(model_.trial(1)), 10) << "the sweep's, below its own 25";
  EXPECT_EQ(pricing.MarginalPace(model_.trial(2)), 10) << "its donor's";
}

TEST(Pricing, NothingIsPricedBeforeAnythingWasMeasured) {
  SweepModel model(PricedSpec());
  ASSERT_TRUE(model.Apply(event::TrialCreated{.trial = 0}).ok());
  const PlannerOptions options;
  const Pricing pricing(model, options);
  EXPECT_EQ(pricing.SegmentSeconds(0, 3), std::nullopt);
  EXPECT_EQ(pricing.SegmentSeconds(1, 3), std::nullopt);
  EXPECT_EQ(pricing.MarginalPace(model.trial(0)), std::nullopt);
  EXPECT_EQ(pricing.CostOf(std::nullopt), std::nullopt);
}

// Device-seconds: the seconds with their margin and the grace period, at least the minimum, on
// every device.
TEST(Pricing, ACostIsTheSecondsWithMarginAndGraceOnEveryDevice) {
  struct Row {
    double seconds;
    int gpus;
    double min_reservation_seconds;
    double device_seconds;
  };
  const Row rows[] = {
      {100, 1, 5, 100 * 1.25 + 10}, {100, 2, 5, 2 * (100 * 1.25 + 10)},
      {1, 1, 5, 1.25 + 10},         {1, 1, 30, 30},
      {1, 0, 5, 1.25 + 10},  // a CPU trial is charged as one device
  };
  for (const Row& row : rows) {
    SweepModel model(PricedSpec(row.gpus));
    PlannerOptions options;
    options.min_reservation_seconds = row.min_reservation_seconds;
    const Pricing pricing(model, options);
    EXPECT_EQ(pricing.CostOf(row.seconds), row.device_seconds)
        << row.seconds << " s on " << row.gpus << " GPUs";
  }
}

TEST(Pricing, AReservationReachesTheNextRungUnlessDeadlinesCannotGrow) {
  struct Row {
    const char* mode;
    bool deadlines_only_shrink;
    double progress;
    double until;
    double reserved_until;
  };
  const Row rows[] = {
      {"stop", false, 0, 27, 1},  {"stop", false, 1, 27, 3}, {"stop", false, 3, 9, 9},
      {"stop", false, 9, 27, 27}, {"stop", true, 0, 27, 27}, {"pause", false, 3, 27, 27},
      {"pause", false, 1, 9, 3},  {"pause", true, 1, 9, 9},
  };
  for (const Row& row : rows) {
    SweepModel model(
        testing::SpecWith([&row](json& j) { j["spec"]["scheduler"]["mode"] = row.mode; }));
    PlannerOptions options;
    options.deadlines_only_shrink = row.deadlines_only_shrink;
    const Pricing pricing(model, options);
    EXPECT_EQ(pricing.ReservedUntil(row.progress, row.until), row.reserved_until)
        << row.mode << (row.deadlines_only_shrink ? ", only shrinking" : "") << ", from "
        << row.progress << " to " << row.until;
  }
}

TEST_F(PricingTest, ARequestIsTheCostToWhereTheReservationReaches) {
  const Pricing pricing(model_, options_);
  // Trial 0 from epoch 3 reserves to 9: 6 epochs at its own pace, 80 s.
  EXPECT_EQ(pricing.Requested(0, 3, 27, 4, 1000), 80 * 1.25 + 10);
}

// Without any measurement, a share of what is unreserved, but never less than the grace period
// plus the minimum reservation.
TEST(Pricing, WithoutAMeasurementARequestIsAnEqualShareOfWhatIsLeft) {
  struct Row {
    int free_slots;
    double remaining;
    double requested;
  };
  const Row rows[] = {{4, 1000, 250}, {1, 1000, 1000}, {0, 1000, 1000}, {4, 20, 10 + 5}};
  SweepModel model(PricedSpec());
  const PlannerOptions options;
  const Pricing pricing(model, options);
  for (const Row& row : rows) {
    EXPECT_EQ(pricing.Requested(0, 0, 27, row.free_slots, row.remaining), row.requested)
        << row.free_slots << " slots free of " << row.remaining;
  }
}

TEST(Pricing, PausingSweepsStartATrialAtItsBracketsRung) {
  struct Row {
    const char* algorithm;
    const char* mode;
    bool pausing;
    double first_until;
  };
  const Row rows[] = {
      {"asha", "stop", false, 27},     {"asha", "pause", true, 1}, {"random", "stop", false, 27},
      {"hyperband", "pause", true, 1}, {"pbt", "pause", true, 1},
  };
  for (const Row& row : rows) {
    SweepSpec spec = testing::SpecWith([&row](json& j) {
      j["spec"]["scheduler"]["algorithm"] = row.algorithm;
      j["spec"]["scheduler"]["mode"] = row.mode;
      if (std::string(row.algorithm) == "pbt") j["spec"]["searchSpace"]["lr"]["mutable"] = true;
    });
    SweepModel model(spec);
    EXPECT_EQ(Pausing(spec), row.pausing) << row.algorithm << " " << row.mode;
    EXPECT_EQ(FirstUntil(model, 0), row.first_until) << row.algorithm << " " << row.mode;
  }
}

}  // namespace
}  // namespace bsw::decisions
