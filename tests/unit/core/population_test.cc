#include "operator/core/population.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <variant>
#include <vector>

#include "operator/core/param_axis.h"
#include "operator/core/planner.h"
#include "operator/core/spec_edits.h"
#include "tests/unit/core/simulated_sweep.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// A pbt sweep: a population of `population`, lr and weight-decay mutable, batch-size not, rungs
// every epoch to `max`.
json PopulationJson(const char* algorithm, int population, double max = 3) {
  json j = testing::ValidSweepJson();
  j["spec"]["scheduler"] = {{"algorithm", algorithm}, {"mode", "pause"}, {"seed", 7}};
  j["spec"]["resource"] = {{"min", 1}, {"max", max}};
  j["spec"]["maxTrials"] = population;
  j["spec"]["parallelism"] = population;
  j["spec"]["searchSpace"]["lr"]["mutable"] = true;
  j["spec"]["searchSpace"]["weight-decay"]["mutable"] = true;
  return j;
}

std::string ErrorsOf(const json& j) {
  StatusOr<SweepSpec> spec = ParseSweep(j);
  return spec.ok() ? "" : spec.status().message();
}

TEST(PopulationSpec, PbtAndPb2ParseWithMutableParameters) {
  for (const char* algorithm : {"pbt", "pb2"}) {
    StatusOr<SweepSpec> spec = ParseSweep(PopulationJson(algorithm, 4));
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    EXPECT_TRUE(Population(spec->algorithm));
    EXPECT_STREQ(AlgorithmName(spec->algorithm), algorithm);
    int mutable_count = 0;
    for (const ParamSpec& p : spec->search_space) mutable_count += p.mutable_ ? 1 : 0;
    EXPECT_EQ(mutable_count, 2);
  }
}

TEST(PopulationSpec, EachMistakeNamesItsField) {
  struct Case {
    const char* name;
    std::function<void(json&)> edit;
    const char* error;
  };
  const std::vector<Case> cases = {
      {"stop mode", [](json& j) { j["spec"]["scheduler"]["mode"] = "stop"; },
       "spec.scheduler.mode: pbt needs mode pause"},
      {"no population", [](json& j) { j["spec"].erase("maxTrials"); },
       "spec.maxTrials: required for algorithm pbt"},
      {"nothing mutable",
       [](json& j) {
         j["spec"]["searchSpace"]["lr"].erase("mutable");
         j["spec"]["searchSpace"]["weight-decay"].erase("mutable");
       },
       "spec.searchSpace: pbt needs at least one parameter with mutable: true"},
      {"tpe", [](json& j) { j["spec"]["scheduler"]["sampler"] = "tpe"; },
       "spec.scheduler.sampler: tpe cannot be used with algorithm pbt"},
      {"too many intervals",
       [](json& j) {
         j["spec"]["resource"] = {{"min", 0.01}, {"max", 27}};
       },
       "spec.scheduler.perturbationInterval: pbt pauses every resource.min units unless this "
       "is set, and at most 1000 intervals"},
      {"interval too long", [](json& j) { j["spec"]["scheduler"]["perturbationInterval"] = 3; },
       "spec.scheduler.perturbationInterval: must be greater than 0 and less than "
       "spec.resource.max, got 3"},
      {"interval too short",
       [](json& j) { j["spec"]["scheduler"]["perturbationInterval"] = 0.001; },
       "spec.scheduler.perturbationInterval: at most 1000 intervals"},
      {"mutable grid",
       [](json& j) {
         j["spec"]["searchSpace"]["batch-size"] = {
             {"type", "grid"}, {"values", {64, 128}}, {"mutable", true}};
       },
       "spec.searchSpace.batch-size.mutable: a grid parameter is enumerated"},
      {"mutable not a bool", [](json& j) { j["spec"]["searchSpace"]["lr"]["mutable"] = "yes"; },
       "spec.searchSpace.lr.mutable"},
  };
  for (const Case& c : cases) {
    json j = PopulationJson("pbt", 4);
    c.edit(j);
    EXPECT_THAT(ErrorsOf(j), HasSubstr(c.error)) << c.name;
  }
  json interval = testing::ValidSweepJson();
  interval["spec"]["scheduler"]["perturbationInterval"] = 3;
  EXPECT_THAT(ErrorsOf(interval),
              HasSubstr("spec.scheduler.perturbationInterval: only for algorithms pbt and pb2"));
  json asha = testing::ValidSweepJson();
  asha["spec"]["searchSpace"]["lr"]["mutable"] = true;
  EXPECT_THAT(ErrorsOf(asha),
              HasSubstr("spec.searchSpace.lr.mutable: only algorithms pbt and pb2 "
                        "change a parameter during a trial; the algorithm is asha"));
  json pb2 = PopulationJson("pb2", 4);
  pb2["spec"]["searchSpace"]["batch-size"]["mutable"] = true;
  EXPECT_THAT(ErrorsOf(pb2), HasSubstr("spec.searchSpace.batch-size.mutable: pb2 chooses mutable "
                                       "values in numeric bounds"));
}

TEST(PopulationSpec, RungsSitEveryPerturbationIntervalByDefaultResourceMin) {
  EXPECT_THAT(Rungs(ParseSweep(PopulationJson("pbt", 4, 4)).value()).milestones(),
              ::testing::ElementsAre(1, 2, 3, 4));
  json j = PopulationJson("pb2", 4);
  j["spec"]["resource"] = {{"min", 2}, {"max", 5}};
  EXPECT_THAT(Rungs(ParseSweep(j).value()).milestones(), ::testing::ElementsAre(2, 4, 5));
  j["spec"]["resource"] = {{"min", 1}, {"max", 27}};
  j["spec"]["scheduler"]["perturbationInterval"] = 9;
  EXPECT_THAT(Rungs(ParseSweep(j).value()).milestones(), ::testing::ElementsAre(9, 18, 27));
}

TEST(PopulationSpec, TheIntervalAndMutableAreImmutable) {
  json edited = PopulationJson("pbt", 4, 6);
  edited["spec"]["scheduler"]["perturbationInterval"] = 2;
  edited["spec"]["searchSpace"]["weight-decay"].erase("mutable");
  EXPECT_THAT(ChangedImmutableFields(ParseSweep(PopulationJson("pbt", 4, 6)).value(),
                                     ParseSweep(edited).value()),
              ::testing::ElementsAre("spec.scheduler.perturbationInterval",
                                     "spec.searchSpace.weight-decay"));
}

TEST(PopulationEvents, TrialExploitedRoundTripsAndSetsParamsAndLineage) {
  SweepSpec spec = ParseSweep(PopulationJson("pbt", 2)).value();
  SweepModel model(spec);
  ASSERT_TRUE(model.Apply(event::TrialCreated{.at = 1, .trial = 0, .params = {{"lr", 0.1}}}).ok());
  ASSERT_TRUE(model.Apply(event::TrialCreated{.at = 1, .trial = 1, .params = {{"lr", 0.2}}}).ok());
  event::TrialExploited e{.at = 5, .trial = 1, .rung = 0, .donor = 0};
  e.params = {{"lr", 0.12}};
  e.message = "copied";
  StatusOr<Event> read = EventFromJson(json::parse(EventToJson(e).dump()));
  ASSERT_TRUE(read.ok());
  ASSERT_TRUE(std::holds_alternative<event::TrialExploited>(*read));
  EXPECT_EQ(std::get<event::TrialExploited>(*read).donor, 0);
  ASSERT_TRUE(model.Apply(*read).ok());
  const Trial& t = model.trial(1);
  EXPECT_EQ(t.params, (Config{{"lr", 0.12}}));
  ASSERT_EQ(t.lineage.size(), 1u);
  EXPECT_EQ(t.lineage[0].donor, 0);
  EXPECT_EQ(t.lineage[0].resource, 1);
  EXPECT_EQ(t.lineage[0].previous, (Config{{"lr", 0.2}}));

  event::TrialExploited self{.at = 6, .trial = 1, .rung = 0, .donor = 1};
  EXPECT_FALSE(model.Apply(self).ok());
  event::TrialExploited last_rung{.at = 6, .trial = 1, .rung = 2, .donor = 0};
  EXPECT_FALSE(model.Apply(last_rung).ok());
}

TEST(Perturb, ChangesOnlyMutableValuesAndKeepsThemInBounds) {
  json j = PopulationJson("pbt", 4);
  j["spec"]["searchSpace"]["epochs-x"] = {
      {"type", "int"}, {"min", 1}, {"max", 5}, {"mutable", true}};
  j["spec"]["searchSpace"]["batch-size"]["mutable"] = true;
  SweepSpec spec = ParseSweep(j).value();
  Config start = {{"batch-size", 128},
                  {"epochs-x", 5},
                  {"lr", 0.1},
                  {"warmup-fraction", 0.05},
                  {"weight-decay", 1e-5}};
  Random random(3);
  bool lr_changed = false;
  for (int i = 0; i < 200; ++i) {
    Config out = Perturb(spec, start, random);
    ASSERT_EQ(out.size(), start.size());
    EXPECT_EQ(*FindParam(out, "warmup-fraction"), 0.05);  // not mutable
    double lr = FindParam(out, "lr")->get<double>();
    EXPECT_GE(lr, 1e-4);
    EXPECT_LE(lr, 1e-1);
    lr_changed |= lr != 0.1;
    EXPECT_TRUE(FindParam(out, "epochs-x")->is_number_integer());
    int64_t x = FindParam(out, "epochs-x")->get<int64_t>();
    EXPECT_GE(x, 1);
    EXPECT_LE(x, 5);
    json batch = *FindParam(out, "batch-size");
    EXPECT_THAT(batch.get<int>(), ::testing::AnyOf(64, 128, 256));
  }
  EXPECT_TRUE(lr_changed);
}

// A population that reached rung 0 (epoch 1) with the given values, each paused there after 10 s,
// under a budget of `gpu_hours`.
struct PausedPopulation {
  testing::SimulatedSweep h;
  double spent = 0;  // device-seconds, all of them charged

  PausedPopulation(const char* algorithm, std::vector<double> values, double gpu_hours = 1)
      : h(ParseSweep(
              WithBudget(PopulationJson(algorithm, static_cast<int>(values.size())), gpu_hours))
              .value()) {
    h.PassAndCarry();  // creates and launches the population
    h.Advance(10);
    for (size_t i = 0; i < values.size(); ++i) {
      h.Report(static_cast<int64_t>(i), 1, values[i]);
      h.Exit(static_cast<int64_t>(i));
    }
    spent = h.PassAndCarry().held_device_seconds;  // records the values and the ends: all paused
  }

  static json WithBudget(json j, double gpu_hours) {
    j["spec"]["budget"]["gpuHours"] = gpu_hours;
    return j;
  }
};

// The trials that `plan` launched a segment of.
std::vector<int64_t> Launched(const Step& plan) {
  std::vector<int64_t> out;
  for (const Event& e : plan.events) {
    if (const auto* l = std::get_if<event::SegmentLaunched>(&e)) out.push_back(l->trial);
  }
  return out;
}

TEST(NextStep, TheBottomQuantileGoesOnFromATopTrialsCheckpointTheRestAsTheyWere) {
  PausedPopulation p("pbt", {0.9, 0.8, 0.5, 0.2});
  ASSERT_EQ(p.h.model().count(TrialPhase::kPaused), 4);
  Step plan = p.h.PassAndCarry();
  std::vector<event::TrialExploited> exploits;
  int promoted = 0;
  int launched = 0;
  for (const Event& e : plan.events) {
    if (const auto* x = std::get_if<event::TrialExploited>(&e)) exploits.push_back(*x);
    if (std::holds_alternative<event::TrialPromoted>(e)) ++promoted;
    if (const auto* l = std::get_if<event::SegmentLaunched>(&e)) {
      ++launched;
      EXPECT_EQ(l->from, 1);
      EXPECT_EQ(l->until, 2);
    }
  }
  // ceil(4 / 4) = 1 trial is the bottom quantile, and the top one its donor.
  ASSERT_EQ(exploits.size(), 1u);
  EXPECT_EQ(exploits[0].trial, 3);
  EXPECT_EQ(exploits[0].donor, 0);
  EXPECT_EQ(promoted, 3);
  EXPECT_EQ(launched, 4);
  const Trial& donor = p.h.model().trial(0);
  const Trial& t = p.h.model().trial(3);
  EXPECT_EQ(*FindParam(t.params, "batch-size"), *FindParam(donor.params, "batch-size"));
  EXPECT_EQ(*FindParam(t.params, "warmup-fraction"), *FindParam(donor.params, "warmup-fraction"));
  EXPECT_THAT(exploits[0].message, HasSubstr("in the bottom 1 of 4 at epochs 1 (value 0.2): goes "
                                             "on from fmnist-cnn-t0000 (value 0.9)"));
  ASSERT_EQ(t.lineage.size(), 1u);
  EXPECT_EQ(t.lineage[0].donor, 0);
  EXPECT_THAT(p.h.apply_failures(), ::testing::IsEmpty());
}

TEST(NextStep, IsDeterministicAndNeedsTheDonorsCheckpoint) {
  PausedPopulation a("pbt", {0.9, 0.8, 0.5, 0.2});
  PausedPopulation b("pbt", {0.9, 0.8, 0.5, 0.2});
  const Trial& bottom = a.h.model().trial(3);
  Event first = NextStep(a.h.model(), bottom, 100);
  Event again = NextStep(b.h.model(), b.h.model().trial(3), 100);
  EXPECT_EQ(EventToJson(first), EventToJson(again));
  EXPECT_TRUE(std::holds_alternative<event::TrialExploited>(first));
  // A top trial goes on as it was.
  EXPECT_TRUE(std::holds_alternative<event::TrialPromoted>(
      NextStep(a.h.model(), a.h.model().trial(0), 100)));

  // The top trial's segment failed after reporting: it kept no checkpoint there to copy.
  testing::SimulatedSweep h(ParseSweep(PopulationJson("pbt", 4)).value());
  h.PassAndCarry();
  std::vector<double> values = {0.9, 0.8, 0.5, 0.2};
  for (int64_t i = 0; i < 4; ++i) {
    h.Report(i, 1, values[static_cast<size_t>(i)]);
    h.Exit(i, i == 0 ? 1 : 0);
  }
  h.Advance(10);
  h.PassAndCarry();
  EXPECT_TRUE(
      std::holds_alternative<event::TrialPromoted>(NextStep(h.model(), h.model().trial(3), 100)));
}

TEST(NextStep, ATrialExploitedAtItsRungIsNotExploitedAgain) {
  PausedPopulation p("pbt", {0.9, 0.8, 0.5, 0.2});
  Event first = NextStep(p.h.model(), p.h.model().trial(3), 100);
  ASSERT_TRUE(std::holds_alternative<event::TrialExploited>(first));
  p.h.Journal(first);  // journaled, and the pass ended before the launch
  EXPECT_TRUE(std::holds_alternative<event::TrialPromoted>(
      NextStep(p.h.model(), p.h.model().trial(3), 101)));
}

TEST(NextStep, ATrialAloneAtItsRungGoesOnAsItWas) {
  PausedPopulation p("pbt", {0.3});
  EXPECT_TRUE(std::holds_alternative<event::TrialPromoted>(
      NextStep(p.h.model(), p.h.model().trial(0), 100)));
}

// PB2: every trial's objective gained in proportion to log10(lr) over its intervals, so the
// bandit should ask for a high learning rate.
TEST(Pb2Explore, ProposesWhereTheGainsWereHighest) {
  SweepSpec spec = ParseSweep(PopulationJson("pb2", 8, 4)).value();
  SweepModel model(spec);
  for (int64_t i = 0; i < 8; ++i) {
    double lr = std::pow(10, -4 + 3 * static_cast<double>(i) / 7);
    event::TrialCreated created{.at = 1, .trial = i};
    created.params = {{"lr", lr}, {"weight-decay", 1e-3}};
    ASSERT_TRUE(model.Apply(created).ok());
    double value = 0.1;
    for (double r : {1.0, 2.0, 3.0}) {
      value += 0.05 * (std::log10(lr) + 5);
      event::ValueRecorded v{.at = 2, .trial = i, .resource = r, .value = value};
      ASSERT_TRUE(model.Apply(v).ok());
    }
  }
  Random random(11);
  Config proposed = Pb2Explore(model, {{"lr", 1e-3}, {"weight-decay", 1e-3}}, 2, random);
  double lr = FindParam(proposed, "lr")->get<double>();
  EXPECT_GT(lr, 1e-2) << ParamsText(proposed);
  // With fewer than two measured intervals it perturbs instead: the value stays near its start.
  SweepModel fresh(spec);
  Random again(11);
  Config perturbed = Pb2Explore(fresh, {{"lr", 1e-3}, {"weight-decay", 1e-3}}, 0, again);
  EXPECT_EQ(perturbed.size(), 2u);
}

// The donor's parameters (a width, a batch size) set what the exploited trial's next segment
// costs: it is priced at the donor's pace, not at its own.
TEST(PopulationPlanner, AnExploitedTrialIsPricedAtItsDonorsPace) {
  json j = PopulationJson("pbt", 4);
  j["spec"]["trial"]["template"]["spec"]["terminationGracePeriodSeconds"] = 1;
  testing::SimulatedSweep h(ParseSweep(j).value());
  h.PassAndCarry();
  h.Advance(1);
  h.Report(3, 1, 0.2);  // fast: 1 s for its epoch
  h.PassAndCarry();
  h.Advance(19);
  std::vector<double> values = {0.9, 0.8, 0.5};  // 20 s for theirs
  for (int64_t i = 0; i < 3; ++i) h.Report(i, 1, values[static_cast<size_t>(i)]);
  h.PassAndCarry();
  for (int64_t i = 0; i < 4; ++i) h.Exit(i);
  h.Advance(1);
  h.PassAndCarry();  // all paused
  Step plan = h.PassAndCarry();
  const auto* exploit = testing::FindEvent<event::TrialExploited>(plan);
  ASSERT_NE(exploit, nullptr);
  ASSERT_EQ(exploit->trial, 3);
  for (const Event& e : plan.events) {
    const auto* launch = std::get_if<event::SegmentLaunched>(&e);
    if (launch == nullptr || launch->trial != 3) continue;
    EXPECT_GT(launch->deadline - h.now(), 20) << "priced at its own 1 s per epoch";
  }
  // It fails before it measured anything: its retry is still priced at the donor's pace.
  h.Advance(1);
  h.Exit(3, 1);
  h.PassAndCarry();  // the failure is recorded
  plan = h.PassAndCarry();
  const auto* retry = testing::FindEvent<event::SegmentLaunched>(plan);
  ASSERT_NE(retry, nullptr);
  ASSERT_EQ(retry->trial, 3);
  EXPECT_GT(retry->deadline - h.now(), 20) << "the retry is priced at its own 1 s per epoch";
}

TEST(PopulationPlanner, CreatesTheWholePopulationBeforeAnyTrialGoesOn) {
  json j = PopulationJson("pbt", 4);
  j["spec"]["parallelism"] = 2;
  testing::SimulatedSweep h(ParseSweep(j).value());
  h.PassAndCarry();
  EXPECT_EQ(h.model().trial_count(), 2);
  for (int64_t i = 0; i < 2; ++i) {
    h.Report(i, 1, 0.5);
    h.Exit(i);
  }
  h.Advance(10);
  h.PassAndCarry();  // the ends are recorded
  h.PassAndCarry();
  // The two free slots go to the rest of the population, not to the paused trials.
  EXPECT_EQ(h.model().trial_count(), 4);
  EXPECT_EQ(h.model().count(TrialPhase::kPaused), 2);
}

// Once the budget left cannot carry the whole population to the full resource, it carries the
// most advanced trials, best first, that it can: they go on, and the others only with what
// carrying those leaves over.
TEST(PopulationPlanner, OnceTheBudgetCannotCarryThePopulationItCarriesTheBestTrials) {
  // With the budget ample, every trial goes on, each segment asking for the same.
  PausedPopulation ample("pbt", {0.9, 0.8, 0.5, 0.2});
  Step plan = ample.h.PassAndCarry();
  ASSERT_EQ(Launched(plan).size(), 4u);
  double segment = (plan.held_device_seconds - ample.spent) / 4;
  ASSERT_GT(segment, 0);
  // What a population of `n` spent to epoch 1, and `left` device-seconds more.
  auto hours = [&](double n, double left) { return (ample.spent / 4 * n + left) / 3600; };

  // Left: two trials' two segments each to epoch 3, and half a segment.
  PausedPopulation tight("pbt", {0.5, 0.9, 0.2, 0.8}, hours(4, 4.5 * segment));
  plan = tight.h.PassAndCarry();
  EXPECT_THAT(Launched(plan), ::testing::UnorderedElementsAre(1, 3));
  EXPECT_EQ(testing::CountEvents<event::TrialExploited>(plan), 0) << "the bottom trial waits";
  EXPECT_EQ(tight.h.model().count(TrialPhase::kPaused), 2);

  // Left: the same and a segment and a half: the best of the others goes on too.
  PausedPopulation slack("pbt", {0.5, 0.9, 0.2, 0.8}, hours(4, 5.5 * segment));
  plan = slack.h.PassAndCarry();
  EXPECT_THAT(Launched(plan), ::testing::UnorderedElementsAre(1, 3, 0));

  // Left: not even one trial's way to the end: the best goes as far as it can.
  PausedPopulation short_of_one("pbt", {0.5, 0.9}, hours(2, 1.5 * segment));
  plan = short_of_one.h.PassAndCarry();
  EXPECT_THAT(Launched(plan), ::testing::ElementsAre(1));
  EXPECT_THAT(short_of_one.h.apply_failures(), ::testing::IsEmpty());
}

}  // namespace
}  // namespace bsw
