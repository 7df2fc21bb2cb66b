// Pb2Explore, PB2's explore step: where the bandit proposes to go for each goal and trend, what
// it may change, and when it perturbs as PBT does instead. (Its first case is
// population_test.cc's.)
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "operator/core/param_axis.h"
#include "operator/core/population.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using nlohmann::json;

// A pb2 population of 8 with lr and weight-decay mutable, rungs at epochs 1, 2, 3 and 4.
SweepSpec Pb2Spec(const char* goal) {
  return testing::SpecWith([goal](json& j) {
    j["spec"]["objective"]["goal"] = goal;
    j["spec"]["scheduler"] = {{"algorithm", "pb2"}, {"mode", "pause"}, {"seed", 7}};
    j["spec"]["resource"] = {{"min", 1}, {"max", 4}};
    j["spec"]["maxTrials"] = 8;
    j["spec"]["parallelism"] = 8;
    j["spec"]["searchSpace"]["lr"]["mutable"] = true;
    j["spec"]["searchSpace"]["weight-decay"]["mutable"] = true;
  });
}

// Trials with learning rates from 1e-4 to 1e-1 whose objective moves by `slope` per decade of lr
// over each interval up to `rungs` epochs (`value` instead, when set, at every rung).
SweepModel Population(const SweepSpec& spec, double slope, int rungs = 3,
                      std::optional<double> value = std::nullopt) {
  SweepModel model(spec);
  for (int64_t i = 0; i < 8; ++i) {
    const double lr = std::pow(10, -4 + 3 * static_cast<double>(i) / 7);
    EXPECT_TRUE(
        model.Apply(event::TrialCreated{.trial = i, .params = {{"lr", lr}, {"weight-decay", 1e-3}}})
            .ok());
    double v = 0.5;
    for (int r = 1; r <= rungs; ++r) {
      v += slope * (std::log10(lr) + 5);
      EXPECT_TRUE(
          model
              .Apply(event::ValueRecorded{
                  .trial = i, .resource = static_cast<double>(r), .value = value.value_or(v)})
              .ok());
    }
  }
  return model;
}

const Config kParams = {{"lr", 1e-3}, {"weight-decay", 1e-3}, {"batch-size", 128}};

double Lr(const Config& params) { return FindParam(params, "lr")->get<double>(); }

// The bandit maximizes what the objective gains, whichever way the goal counts it.
TEST(Pb2Explore, GoesWhereTheObjectiveGainedMostForItsGoal) {
  struct Row {
    const char* goal;
    double slope;  // per decade of lr
    bool higher_lr;
  };
  const Row rows[] = {
      {"maximize", 0.05, true},
      {"maximize", -0.05, false},
      {"minimize", -0.05, true},
      {"minimize", 0.05, false},
  };
  for (const Row& row : rows) {
    SweepModel model = Population(Pb2Spec(row.goal), row.slope);
    for (uint64_t seed : {11, 12, 13}) {
      Random random(seed);
      const double lr = Lr(Pb2Explore(model, kParams, 2, random));
      if (row.higher_lr) {
        EXPECT_GT(lr, 1e-2) << row.goal << " by " << row.slope << ", seed " << seed;
      } else {
        EXPECT_LT(lr, 1e-3) << row.goal << " by " << row.slope << ", seed " << seed;
      }
    }
  }
}

TEST(Pb2Explore, ChangesOnlyTheMutableValuesAndKeepsThemInTheirRanges) {
  SweepModel model = Population(Pb2Spec("maximize"), 0.05);
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Random random(seed);
    const Config proposed = Pb2Explore(model, kParams, 2, random);
    ASSERT_EQ(proposed.size(), kParams.size());
    EXPECT_EQ(*FindParam(proposed, "batch-size"), 128) << "not mutable";
    const double lr = Lr(proposed);
    const double weight_decay = FindParam(proposed, "weight-decay")->get<double>();
    EXPECT_GE(lr, 1e-4);
    EXPECT_LE(lr, 1e-1);
    EXPECT_GE(weight_decay, 1e-5);
    EXPECT_LE(weight_decay, 1e-1);
  }
}

TEST(Pb2Explore, TheSameModelAndSeedGiveTheSameProposal) {
  SweepModel model = Population(Pb2Spec("maximize"), 0.05);
  Random a(5);
  Random b(5);
  EXPECT_EQ(Pb2Explore(model, kParams, 2, a), Pb2Explore(model, kParams, 2, b));
}

// Until two intervals are measured (or when the parameters have no point in the space), PB2 has
// nothing to fit: it perturbs, exactly as PBT does with the same seed.
TEST(Pb2Explore, PerturbsAsPbtWithoutTwoMeasuredIntervals) {
  const SweepSpec spec = Pb2Spec("maximize");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Row {
    const char* name;
    SweepModel model;
    Config params;
  };
  const Row rows[] = {
      {"nothing measured", SweepModel(spec), kParams},
      {"one rung each, so no interval", Population(spec, 0.05, 1), kParams},
      {"only NaN values", Population(spec, 0.05, 3, nan), kParams},
      {"no lr to place", Population(spec, 0.05), {{"weight-decay", 1e-3}}},
      {"an lr out of its range", Population(spec, 0.05), {{"lr", 1.0}, {"weight-decay", 1e-3}}},
  };
  for (const Row& row : rows) {
    Random explored(3);
    Random perturbed(3);
    EXPECT_EQ(Pb2Explore(row.model, row.params, 2, explored), Perturb(spec, row.params, perturbed))
        << row.name;
  }
}

}  // namespace
}  // namespace bsw
