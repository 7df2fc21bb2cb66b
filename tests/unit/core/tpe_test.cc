#include "operator/core/tpe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "operator/core/random.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using nlohmann::json;

ParamSpec Numeric(ParamType type, double min, double max, bool log = false) {
  return {.name = "x", .type = type, .min = min, .max = max, .log = log, .values = {}};
}

ParamSpec Discrete(const std::string& name, ParamType type, std::vector<json> values) {
  return {
      .name = name, .type = type, .min = 0, .max = 0, .log = false, .values = std::move(values)};
}

// Observations of `objective` at the random sampler's first `count` configurations.
struct Observed {
  std::vector<Config> configs;
  std::vector<double> values;

  Observed(const std::vector<ParamSpec>& space, int count,
           const std::function<double(const Config&)>& objective) {
    SearchSpace random(space, Algorithm::kAsha, 99);
    for (int i = 0; i < count; ++i) {
      configs.push_back(random.ConfigAt(i));
      values.push_back(objective(configs.back()));
    }
  }

  std::vector<TpeObservation> observations() const {
    std::vector<TpeObservation> out;
    for (size_t i = 0; i < configs.size(); ++i) out.push_back({&configs[i], values[i]});
    return out;
  }
};

// Configuration `index` as TPE proposes it (seed 5) from `observed`.
Config Propose(const std::vector<ParamSpec>& space, const Observed& observed, int64_t index,
               Goal goal = Goal::kMaximize) {
  SearchSpace random(space, Algorithm::kAsha, 5);
  return ProposeTpe(space, random.ConfigAt(index), observed.observations(), goal, 5, index);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct ConcentrationCase {
  const char* name;
  ParamSpec param;
  double optimum;
  bool log_axis;  // distances measured on a log axis
};

void PrintTo(const ConcentrationCase& c, std::ostream* os) { *os << c.name; }

class TpeConcentrates : public ::testing::TestWithParam<ConcentrationCase> {};

TEST_P(TpeConcentrates, ProposalsClusterAroundTheOptimumFarCloserThanUniformOnes) {
  const ConcentrationCase& c = GetParam();
  const std::vector<ParamSpec> space = {c.param};
  auto axis = [&](const json& v) {
    return c.log_axis ? std::log10(v.get<double>()) : v.get<double>();
  };
  auto distance = [&](const Config& config) {
    return std::fabs(axis(config[0].second) - (c.log_axis ? std::log10(c.optimum) : c.optimum));
  };
  Observed observed(space, 30, [&](const Config& config) { return -distance(config); });
  std::vector<double> tpe, uniform;
  SearchSpace random(space, Algorithm::kAsha, 5);
  for (int64_t i = 0; i < 50; ++i) {
    tpe.push_back(distance(Propose(space, observed, i)));
    uniform.push_back(distance(random.ConfigAt(i)));
  }
  std::printf("%s: median distance to the optimum, tpe %.4g, uniform %.4g\n", c.name, Median(tpe),
              Median(uniform));
  EXPECT_LT(Median(tpe), Median(uniform) / 3);
}

INSTANTIATE_TEST_SUITE_P(
    EveryNumericType, TpeConcentrates,
    ::testing::Values(
        ConcentrationCase{"uniform", Numeric(ParamType::kUniform, 0, 10), 7.3, false},
        ConcentrationCase{"logUniform", Numeric(ParamType::kLogUniform, 1e-5, 1), 1e-3, true},
        ConcentrationCase{"int", Numeric(ParamType::kInt, 1, 100), 30, false},
        ConcentrationCase{"int log", Numeric(ParamType::kInt, 1, 4096, true), 64, true}),
    [](const ::testing::TestParamInfo<ConcentrationCase>& row) {
      std::string name = row.param.name;
      std::replace(name.begin(), name.end(), ' ', '_');
      return name;
    });

TEST(Tpe, ProposedValuesStayInsideTheParameterAndKeepItsType) {
  const std::vector<ParamSpec> space = {Numeric(ParamType::kInt, 3, 9)};
  Observed observed(space, 12, [](const Config& c) { return c[0].second.get<double>(); });
  for (int64_t i = 0; i < 200; ++i) {
    const json v = Propose(space, observed, i)[0].second;
    ASSERT_TRUE(v.is_number_integer()) << v;
    EXPECT_GE(v.get<int64_t>(), 3);
    EXPECT_LE(v.get<int64_t>(), 9);
  }
}

TEST(Tpe, ChoiceFavoursTheValueOfTheGoodTrials) {
  const std::vector<ParamSpec> space = {ParamSpec{
      .name = "optimizer", .type = ParamType::kChoice, .values = {"sgd", "adamw", "rmsprop"}}};
  Observed observed(space, 24, [](const Config& c) { return c[0].second == "adamw" ? 0.9 : 0.5; });
  int adamw = 0;
  for (int64_t i = 0; i < 50; ++i) adamw += Propose(space, observed, i)[0].second == "adamw";
  EXPECT_GE(adamw, 45);
}

TEST(Tpe, MinimizeSeeksTheOtherEndOfTheSameObservations) {
  const std::vector<ParamSpec> space = {Numeric(ParamType::kUniform, 0, 10)};
  Observed observed(space, 30, [](const Config& c) { return c[0].second.get<double>(); });
  std::vector<double> maximize, minimize;
  for (int64_t i = 0; i < 50; ++i) {
    maximize.push_back(Propose(space, observed, i, Goal::kMaximize)[0].second.get<double>());
    minimize.push_back(Propose(space, observed, i, Goal::kMinimize)[0].second.get<double>());
  }
  EXPECT_GT(Median(maximize), 7);
  EXPECT_LT(Median(minimize), 3);
}

TEST(Tpe, NonFiniteValuesRankWorst) {
  // The high end diverges (NaN): under either goal TPE proposes from the low end.
  const std::vector<ParamSpec> space = {Numeric(ParamType::kUniform, 0, 10)};
  for (Goal goal : {Goal::kMaximize, Goal::kMinimize}) {
    Observed observed(space, 30, [](const Config& c) {
      double x = c[0].second.get<double>();
      return x > 4 ? std::nan("") : 1.0;
    });
    std::vector<double> proposed;
    for (int64_t i = 0; i < 50; ++i) {
      proposed.push_back(Propose(space, observed, i, goal)[0].second.get<double>());
    }
    EXPECT_LT(Median(proposed), 4) << GoalName(goal);
  }
}

TEST(Tpe, SameInputsGiveTheSameProposalAndIndexesDiffer) {
  const std::vector<ParamSpec> space = {Discrete("batch-size", ParamType::kChoice, {64, 128, 256}),
                                        Numeric(ParamType::kLogUniform, 1e-4, 1e-1)};
  Observed observed(space, 10, [](const Config& c) { return c[1].second.get<double>(); });
  EXPECT_EQ(Propose(space, observed, 3), Propose(space, observed, 3));
  EXPECT_NE(Propose(space, observed, 3), Propose(space, observed, 4));
}

TEST(Tpe, GridParametersTakeEveryValueInTurnAsWithTheRandomSampler) {
  const std::vector<ParamSpec> space = {Discrete("width", ParamType::kGrid, {32, 64}),
                                        Numeric(ParamType::kUniform, 0, 1)};
  Observed observed(space, 10, [](const Config& c) { return c[1].second.get<double>(); });
  SearchSpace random(space, Algorithm::kAsha, 5);
  for (int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(Propose(space, observed, i)[0], random.ConfigAt(i)[0]);
  }
}

TEST(Tpe, ObservedValuesOutsideTheParameterAreLeftOut) {
  // A spec changed mid-sweep: values the parameter can no longer take, or of another type.
  const std::vector<ParamSpec> space = {Numeric(ParamType::kUniform, 0, 1)};
  std::vector<Config> configs = {{{"x", 5.0}}, {{"x", "fast"}}, {{"y", 0.5}}, {{"x", 0.9}}};
  std::vector<TpeObservation> observations;
  for (const Config& c : configs) observations.push_back({&c, 1});
  SearchSpace random(space, Algorithm::kAsha, 5);
  double x = ProposeTpe(space, random.ConfigAt(0), observations, Goal::kMaximize, 5, 0)[0]
                 .second.get<double>();
  EXPECT_GE(x, 0);
  EXPECT_LE(x, 1);
}

// A model of ValidSweepJson() (four parameters, rungs at 1, 3, 9 and 27) with `sampler: tpe`.
SweepSpec TpeSpec() {
  return testing::SpecWith([](json& j) { j["spec"]["scheduler"]["sampler"] = "tpe"; });
}

// Creates trial `index` with the random sampler's configuration and records `values` by resource.
void AddTrial(SweepModel& model, int64_t index,
              const std::vector<std::pair<double, double>>& values) {
  event::TrialCreated created{.at = 0, .trial = index};
  created.params = model.search_space().ConfigAt(index);
  ASSERT_TRUE(model.Apply(created).ok());
  event::SegmentLaunched launched{.at = 0, .trial = index};
  launched.until = 27;
  launched.deadline = 1e9;
  ASSERT_TRUE(model.Apply(launched).ok());
  for (const auto& [resource, value] : values) {
    event::ValueRecorded recorded{.at = 0, .trial = index};
    recorded.resource = resource;
    recorded.value = value;
    ASSERT_TRUE(model.Apply(recorded).ok());
  }
}

TEST(TpeMinValues, IsTheParametersPlusTwoAndAtLeastSix) {
  EXPECT_EQ(TpeMinValues(1), 6);
  EXPECT_EQ(TpeMinValues(4), 6);
  EXPECT_EQ(TpeMinValues(5), 7);
  EXPECT_EQ(TpeMinValues(10), 12);
}

TEST(TpeSampler, FallsBackToRandomUntilARungHasEnoughValues) {
  SweepModel model(TpeSpec());
  ASSERT_EQ(TpeMinValues(model.spec().search_space.size()), 6);
  for (int64_t i = 0; i < 5; ++i) AddTrial(model, i, {{1, 0.1 * static_cast<double>(i)}});
  EXPECT_THAT(TpeObservations(model), ::testing::IsEmpty());
  EXPECT_EQ(NewTrialConfig(model, 5), model.search_space().ConfigAt(5));

  AddTrial(model, 5, {{1, 0.5}});
  EXPECT_THAT(TpeObservations(model), ::testing::SizeIs(6));
  EXPECT_NE(NewTrialConfig(model, 6), model.search_space().ConfigAt(6));
}

TEST(TpeSampler, ModelsTheHighestRungWithEnoughValues) {
  SweepModel model(TpeSpec());
  // Eight trials at rung 1 (resource 1), six of them at rung 2 (resource 3), two at rung 3.
  for (int64_t i = 0; i < 8; ++i) {
    std::vector<std::pair<double, double>> values = {{1, 0.1}};
    if (i < 6) values.emplace_back(3, 0.3);
    if (i < 2) values.emplace_back(9, 0.9);
    AddTrial(model, i, values);
  }
  std::vector<TpeObservation> observations = TpeObservations(model);
  ASSERT_THAT(observations, ::testing::SizeIs(6));
  for (const TpeObservation& o : observations) EXPECT_EQ(o.value, 0.3);
}

TEST(TpeSampler, TrialsThatEndedBelowTheRungCountAsWorstAndRunningOnesNot) {
  SweepModel model(TpeSpec());
  for (int64_t i = 0; i < 6; ++i) AddTrial(model, i, {{1, 0.5}, {3, 0.6}});
  AddTrial(model, 6, {});  // diverges before rung 0
  event::SegmentEnded diverged{.at = 0, .trial = 6};
  diverged.reason = "Diverged";
  ASSERT_TRUE(model.Apply(diverged).ok());
  AddTrial(model, 7, {{1, 0.1}});  // cut at rung 0
  event::TrialStopped stop{.at = 0, .trial = 7};
  stop.reason = "RungCutoff";
  ASSERT_TRUE(model.Apply(stop).ok());
  ASSERT_TRUE(model.Apply(event::SegmentEnded{.at = 0, .trial = 7}).ok());
  AddTrial(model, 8, {{1, 0.9}});  // still on its way to rung 1

  std::vector<TpeObservation> observations = TpeObservations(model);
  ASSERT_THAT(observations, ::testing::SizeIs(8));
  for (int64_t i : {6, 7}) {
    EXPECT_EQ(observations[static_cast<size_t>(i)].params, &model.trial(i).params);
    EXPECT_TRUE(std::isnan(observations[static_cast<size_t>(i)].value));
  }
}

TEST(TpeSampler, RandomSamplerIgnoresTheValues) {
  SweepModel model(testing::SpecWith([](json&) {}));
  for (int64_t i = 0; i < 10; ++i) AddTrial(model, i, {{1, 0.1 * static_cast<double>(i)}});
  EXPECT_EQ(NewTrialConfig(model, 10), model.search_space().ConfigAt(10));
}

}  // namespace
}  // namespace bsw
