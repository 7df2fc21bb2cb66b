// Whole sweeps against a simulated backend and clock: the planner loop as the controller runs it,
// with trials that follow a seeded synthetic learning curve, start late, crash now and then, and
// are killed at their deadline as the kubelet would.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/overloaded.h"
#include "operator/core/planner.h"
#include "operator/core/random.h"
#include "operator/core/sweep_model.h"
#include "tests/fixtures/simulated-trainer/simulated_trainer.h"
#include "tests/unit/core/simulated_sweep.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

using nlohmann::json;
using testing::SimulatedSweep;

struct SimOptions {
  Algorithm algorithm = Algorithm::kAsha;
  AshaMode mode = AshaMode::kStop;
  Sampler sampler = Sampler::kRandom;
  uint64_t seed = 1;
  int max_trials = 1000;
  double budget_gpu_hours = 20;
  int parallelism = 8;
  int gpus = 1;
  double crash_probability = 0.02;  // per segment
};

struct SimResult {
  std::vector<Event> journal;
  SweepPhase phase = SweepPhase::kPending;
  double charged_device_seconds = 0;
  double budget_device_seconds = 0;
  int64_t trials = 0;
  int max_live = 0;
  std::vector<std::string> violations;  // invariant breaches seen while running
  std::vector<std::string> apply_failures;
  std::map<TrialPhase, int64_t> counts;
  std::optional<BestResult> best;
  int passes = 0;
};

SweepSpec SimSpec(const SimOptions& o) {
  json j = testing::ValidSweepJson();
  j["metadata"]["name"] = "sim";
  j["spec"]["budget"]["gpuHours"] = o.budget_gpu_hours;
  j["spec"]["resource"] = {{"min", 1}, {"max", 27}, {"reductionFactor", 3}};
  j["spec"]["scheduler"] = {{"algorithm", AlgorithmName(o.algorithm)},
                            {"mode", o.mode == AshaMode::kStop ? "stop" : "pause"},
                            {"sampler", o.sampler == Sampler::kTpe ? "tpe" : "random"},
                            {"seed", o.seed}};
  j["spec"]["parallelism"] = o.parallelism;
  j["spec"]["maxTrials"] = o.max_trials;
  j["spec"]["maxFailedTrials"] = o.max_trials;
  j["spec"]["trial"]["gpus"] = o.gpus;
  j["spec"]["trial"]["template"]["spec"]["terminationGracePeriodSeconds"] = 5;
  if (Population(o.algorithm)) j["spec"]["searchSpace"]["lr"]["mutable"] = true;
  return ParseSweep(j).value();
}

// A backend whose trials run on the simulated clock.
class SimBackend {
 public:
  SimBackend(SimulatedSweep& h, const SimOptions& o, SimResult& result)
      : h_(h), o_(o), result_(result), rng_(MixSeed(o.seed, 77)) {}

  void Carry(const Step& plan) {
    for (const StepAction& action : plan.actions) {
      std::visit(
          Overloaded{
              [&](const Launch& a) { Start(a); },
              [&](const Stop& a) {
                auto it = runs_.find({a.name, a.segment});
                if (it != runs_.end() && !it->second.stop_at) {
                  it->second.stop_at = h_.now() + 1;
                }
              },
              [&](const MoveDeadline& a) {
                h_.observed().segments.at({a.name, a.segment}).deadline_unix_seconds = a.deadline;
              }},
          action);
    }
  }

  void Start(const Launch& a) {
    const std::string& name = a.spec.trial;
    const int64_t index = h_.model().FindTrial(name).value();
    auto key = std::make_pair(name, a.spec.segment);
    if (h_.observed().segments.contains(key)) return;  // Start is idempotent
    for (const auto& [k, run] : runs_) {
      if (k.first == name && !run.ended) {
        result_.violations.push_back(name + " launched while segment " + std::to_string(k.second) +
                                     " is live");
      }
    }
    Run run;
    run.trial = index;
    run.progress = h_.model().trial(index).progress();
    run.until = a.spec.until_resource;
    run.seconds_per_unit = 4 + 4 * Random(MixSeed(o_.seed, static_cast<uint64_t>(index))).Uniform();
    run.pending_until = h_.now() + std::floor(rng_.Uniform() * 3);
    if (rng_.Uniform() < o_.crash_probability) {
      // Half of the crashes hit while training, half at the exit after the last report
      // (a checkpoint that could not be written).
      double u = rng_.Uniform();
      run.crash_at = u < 0.5 ? run.progress + (a.spec.until_resource - run.progress) * 2 * u
                             : a.spec.until_resource;
    }
    runs_[key] = run;
    SegmentStatus s;
    s.trial = name;
    s.segment = a.spec.segment;
    s.devices = o_.gpus;
    s.deadline_unix_seconds = a.spec.deadline_unix_seconds;
    h_.observed().segments[key] = s;
  }

  // Moves the clock on by `dt` seconds, running every live segment.
  void Advance(double dt) {
    h_.Advance(dt);
    const double now = h_.now();
    int live = 0;
    for (auto& [key, run] : runs_) {
      if (run.ended) continue;
      SegmentStatus& s = h_.observed().segments.at(key);
      std::optional<testing::SimulatedEnd> end = testing::StepSimulatedRun(
          run, s, now, h_.model().trial(run.trial).params, o_.seed, h_.observed().metrics);
      if (!end) {
        ++live;
        continue;
      }
      run.ended = true;
      if (end->ran && end->reason == Reason::kDeadlineExceeded) ++deadline_kills_;
    }
    result_.max_live = std::max(result_.max_live, live);
    if (live > o_.parallelism) {
      result_.violations.push_back(std::to_string(live) + " segments live at once");
    }
  }

  bool AnyLive() const {
    for (const auto& [key, run] : runs_) {
      if (!run.ended) return true;
    }
    return false;
  }

  double Charged() const {
    double total = 0;
    for (const auto& [key, s] : h_.observed().segments) {
      if (s.started_unix_seconds && s.finished_unix_seconds) {
        total += ChargedDevices(s.devices) * (*s.finished_unix_seconds - *s.started_unix_seconds);
      } else if (s.started_unix_seconds) {
        total += ChargedDevices(s.devices) * (h_.now() - *s.started_unix_seconds);
      }
    }
    return total;
  }

  int deadline_kills() const { return deadline_kills_; }

 private:
  struct Run : testing::SimulatedRun {
    bool ended = false;
  };

  SimulatedSweep& h_;
  SimOptions o_;
  SimResult& result_;
  Random rng_;
  std::map<std::pair<std::string, int>, Run> runs_;
  int deadline_kills_ = 0;
};

SimResult Simulate(const SimOptions& o) {
  SimResult result;
  SweepSpec spec = SimSpec(o);
  SimulatedSweep h(spec);
  SimBackend backend(h, o, result);
  result.budget_device_seconds = spec.budget_gpu_hours * 3600;
  constexpr int kMaxPasses = 20'000;
  while (result.passes < kMaxPasses && (!h.model().finished() || backend.AnyLive())) {
    backend.Carry(h.Pass());
    ++result.passes;
    backend.Advance(2);
    if (backend.Charged() > result.budget_device_seconds) {
      result.violations.push_back("charge above budget at pass " + std::to_string(result.passes));
      break;
    }
  }
  if (result.passes == kMaxPasses) result.violations.push_back("sweep never finished");
  result.journal = h.journal();
  result.phase = h.model().phase();
  result.charged_device_seconds = backend.Charged();
  result.trials = h.model().trial_count();
  result.apply_failures = h.apply_failures();
  for (TrialPhase p : {TrialPhase::kRunning, TrialPhase::kPaused, TrialPhase::kCompleted,
                       TrialPhase::kStopped, TrialPhase::kFailed}) {
    result.counts[p] = h.model().count(p);
  }
  result.best = h.model().best();
  return result;
}

std::string Dump(const std::vector<Event>& journal) {
  std::string out;
  for (const Event& e : journal) out += EventToJson(e).dump() + "\n";
  return out;
}

// Replays the journal, through its JSON form, into a fresh model of the same spec.
SweepModel Replay(const SimOptions& o, const std::vector<Event>& journal) {
  SweepModel model(SimSpec(o));
  for (const Event& e : journal) {
    StatusOr<Event> read = EventFromJson(json::parse(EventToJson(e).dump()));
    EXPECT_TRUE(read.ok());
    EXPECT_TRUE(model.Apply(*read).ok());
  }
  return model;
}

void ExpectSoundSweep(const SimOptions& o, const SimResult& r) {
  EXPECT_THAT(r.violations, ::testing::IsEmpty());
  EXPECT_THAT(r.apply_failures, ::testing::IsEmpty());
  EXPECT_LE(r.charged_device_seconds, r.budget_device_seconds);
  EXPECT_LE(r.max_live, o.parallelism);
  EXPECT_EQ(r.counts.at(TrialPhase::kRunning), 0);
  ASSERT_TRUE(r.best.has_value());

  SweepModel replayed = Replay(o, r.journal);
  EXPECT_EQ(replayed.phase(), r.phase);
  EXPECT_EQ(replayed.trial_count(), r.trials);
  for (const auto& [phase, count] : r.counts) EXPECT_EQ(replayed.count(phase), count);
  ASSERT_TRUE(replayed.best().has_value());
  EXPECT_EQ(replayed.best()->trial, r.best->trial);
  EXPECT_DOUBLE_EQ(replayed.best()->value, r.best->value);
  EXPECT_DOUBLE_EQ(replayed.best()->resource, r.best->resource);
}

// One line per simulated run, for the test log: its size, cost and outcome.
void PrintRun(const char* label, const SimResult& r, double ms, TrialPhase early_exit) {
  std::printf(
      "%s: %lld trials, %d passes, %.0f ms, charge %.0f of %.0f device-s, completed %lld %s %lld "
      "failed %lld\n",
      label, static_cast<long long>(r.trials), r.passes, ms, r.charged_device_seconds,
      r.budget_device_seconds, static_cast<long long>(r.counts.at(TrialPhase::kCompleted)),
      TrialPhaseName(early_exit), static_cast<long long>(r.counts.at(early_exit)),
      static_cast<long long>(r.counts.at(TrialPhase::kFailed)));
}

// Simulates a sweep of 1,000 trials that must complete soundly, and prints its line (PrintRun).
SimResult SimulateThousand(const char* label, const SimOptions& o, TrialPhase early_exit) {
  auto start = std::chrono::steady_clock::now();
  SimResult r = Simulate(o);
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.trials, 1000);
  EXPECT_EQ(r.phase, SweepPhase::kCompleted);
  ExpectSoundSweep(o, r);
  PrintRun(label, r, ms, early_exit);
  return r;
}

TEST(Simulation, StopModeRunsAThousandTrialsWithinBudget) {
  SimOptions o;
  o.mode = AshaMode::kStop;
  SimResult r = SimulateThousand("stop mode", o, TrialPhase::kStopped);
  EXPECT_GT(r.counts.at(TrialPhase::kCompleted), 0);
  EXPECT_GT(r.counts.at(TrialPhase::kStopped), 500);  // ASHA stops most of them early
  RecordProperty("simulated_passes", r.passes);
}

TEST(Simulation, PauseModeRunsAThousandTrialsWithinBudget) {
  SimOptions o;
  o.mode = AshaMode::kPause;
  o.gpus = 2;
  o.budget_gpu_hours = 40;
  SimResult r = SimulateThousand("pause mode", o, TrialPhase::kPaused);
  EXPECT_GT(r.counts.at(TrialPhase::kCompleted), 0);
  EXPECT_GT(r.counts.at(TrialPhase::kPaused), 500);
}

TEST(Simulation, TightBudgetEndsBudgetExhaustedWithoutOverspending) {
  for (auto [algorithm, mode] : {std::pair{Algorithm::kAsha, AshaMode::kStop},
                                 {Algorithm::kAsha, AshaMode::kPause},
                                 {Algorithm::kHyperband, AshaMode::kStop},
                                 {Algorithm::kHyperband, AshaMode::kPause}}) {
    SimOptions o;
    o.algorithm = algorithm;
    o.mode = mode;
    o.budget_gpu_hours = 1;
    o.gpus = 0;  // a CPU sweep is charged one device per trial
    SimResult r = Simulate(o);
    const std::string label = std::string(AlgorithmName(algorithm)) + "/" + AshaModeName(mode);
    EXPECT_EQ(r.phase, SweepPhase::kBudgetExhausted) << label;
    EXPECT_LT(r.trials, 1000);
    ExpectSoundSweep(o, r);
    // The cap is spent, not left idle: at least 80% of it was charged.
    EXPECT_GE(r.charged_device_seconds, 0.8 * r.budget_device_seconds) << label;
  }
}

RC_GTEST_PROP(Simulation, SameSeedGivesAnIdenticalSweepAndChargeStaysWithinBudget,
              (bool pause, bool tpe, bool hyperband)) {
  SimOptions o;
  o.algorithm = hyperband ? Algorithm::kHyperband : Algorithm::kAsha;
  o.sampler = tpe ? Sampler::kTpe : Sampler::kRandom;
  o.seed =
      *rc::gen::inRange<uint64_t>(0, uint64_t{1} << 52);  // spec.scheduler.seed is a JSON number
  o.mode = pause ? AshaMode::kPause : AshaMode::kStop;
  o.max_trials = *rc::gen::inRange(5, 40);
  o.parallelism = *rc::gen::inRange(1, 6);
  o.budget_gpu_hours = *rc::gen::inRange(1, 40) / 20.0;
  o.crash_probability = 0.15;
  SimResult a = Simulate(o);
  SimResult b = Simulate(o);
  RC_ASSERT(a.violations.empty());
  RC_ASSERT(a.apply_failures.empty());
  RC_ASSERT(a.charged_device_seconds <= a.budget_device_seconds);
  RC_ASSERT(a.phase != SweepPhase::kRunning);
  RC_ASSERT(Dump(a.journal) == Dump(b.journal));
}

// Adds to `decades` how far, in decades, the lr of each trial in the second half of the sweep
// (when TPE has values to model) is from the curve's peak at 3e-3.
void AddDecadesFromPeakLater(const SimResult& r, std::vector<double>& decades) {
  for (const Event& e : r.journal) {
    const auto* created = std::get_if<event::TrialCreated>(&e);
    if (created == nullptr || created->trial < r.trials / 2) continue;
    for (const auto& [name, value] : created->params) {
      if (name == "lr") decades.push_back(std::fabs(std::log10(value.get<double>()) + 2.5));
    }
  }
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The objective's ceiling depends on lr alone (one parameter of four), and a sweep's best value is
// within the curve's noise (±0.005) of it under either sampler: the best value does not tell the
// samplers apart reliably, seed by seed or on average. What TPE does reliably is propose closer to
// the peak, taken over a few seeds.
TEST(Simulation, TpeUnderAshaProposesCloserToThePeakThanRandomAtEqualBudget) {
  std::vector<double> random_decades, tpe_decades;
  for (uint64_t seed : {1, 2, 3, 4, 5, 6}) {
    SimOptions o;
    o.seed = seed;
    o.budget_gpu_hours = 0.4;
    o.parallelism = 4;
    SimResult random = Simulate(o);
    o.sampler = Sampler::kTpe;
    SimResult tpe = Simulate(o);
    ExpectSoundSweep(o, tpe);
    AddDecadesFromPeakLater(random, random_decades);
    AddDecadesFromPeakLater(tpe, tpe_decades);
    std::printf("seed %llu: best random %.4f (%lld trials), tpe %.4f (%lld trials)\n",
                static_cast<unsigned long long>(seed), random.best->value,
                static_cast<long long>(random.trials), tpe.best->value,
                static_cast<long long>(tpe.trials));
  }
  std::printf("later trials' lr, median decades from the peak: random %.3f, tpe %.3f\n",
              Median(random_decades), Median(tpe_decades));
  EXPECT_LT(Median(tpe_decades), 0.85 * Median(random_decades));
}

TEST(Simulation, DifferentSeedsGiveDifferentSweeps) {
  SimOptions a;
  a.max_trials = 40;
  SimOptions b = a;
  b.seed = 2;
  EXPECT_NE(Dump(Simulate(a).journal), Dump(Simulate(b).journal));
}

// A pause-mode sweep of 9 trials that once never finished: it must end Completed and sound. The
// caller checks, on its replayed model, that the seed still makes the situation.
struct PauseCase {
  SimResult result;
  SweepModel replayed;
};
PauseCase CompletedPauseSweep(uint64_t seed, int parallelism, double budget_gpu_hours,
                              double crash_probability) {
  const SimOptions o{.mode = AshaMode::kPause,
                     .seed = seed,
                     .max_trials = 9,
                     .budget_gpu_hours = budget_gpu_hours,
                     .parallelism = parallelism,
                     .crash_probability = crash_probability};
  SimResult r = Simulate(o);
  EXPECT_EQ(r.phase, SweepPhase::kCompleted);
  ExpectSoundSweep(o, r);
  return PauseCase{r, Replay(o, r.journal)};
}

TEST(Simulation, StuckPauseSweepBug_FailedTopTrialDoesNotKeepTheSweepRunningForever) {
  // A trial records the best value at rung 1 and then fails for good: it held the rung's only
  // promotion, the sweep had nothing to run and never finished.
  auto [r, replayed] = CompletedPauseSweep(35, 1, 0.05, 0.3);
  ASSERT_EQ(r.counts.at(TrialPhase::kFailed), 1);
  // The seed still makes the situation: the failed trial is the one that was best at rung 1.
  std::optional<int64_t> failed, best_at_rung_one;
  for (int64_t i = 0; i < replayed.trial_count(); ++i) {
    const Trial& t = replayed.trial(i);
    if (t.phase == TrialPhase::kFailed) failed = i;
    if (!t.rung_values.contains(1)) continue;
    if (!best_at_rung_one ||
        t.rung_values.at(1) > replayed.trial(*best_at_rung_one).rung_values.at(1)) {
      best_at_rung_one = i;
    }
  }
  EXPECT_EQ(failed, best_at_rung_one);
  EXPECT_EQ(replayed.trial(*failed).progress(), 1);
  // No trial reached the full resource, and the sweep says why (issue 40).
  EXPECT_EQ(replayed.finish_message(),
            "9 trials finished; no trial reached epochs 27: taking the best, sim-t0001 at epochs "
            "3, there needs 0.0597 GPU-hours and 0.0288 are left");
}

TEST(Simulation, LeaderTakenToTheEndDoesNotHoldTheRungsItRanThrough) {
  // Found by SameSeedGivesAnIdenticalSweepAndChargeStaysWithinBudget: the leader was taken from
  // rung 0 to the end, ranked first at rung 1 on its way, and stayed that rung's candidate after it
  // completed. Nothing could take the promotion, and the sweep never finished.
  auto [r, replayed] = CompletedPauseSweep(714288691656623, 3, 0.1, 0.15);
  // The seed still makes the situation: one trial went from rung 0 to the full resource in one
  // segment and was the best of three or more values at rung 1.
  ASSERT_EQ(r.counts.at(TrialPhase::kCompleted), 1);
  std::optional<int64_t> leader;
  for (const Event& e : r.journal) {
    const auto* promoted = std::get_if<event::TrialPromoted>(&e);
    if (promoted && promoted->rung == 0 &&
        promoted->message.find("while the budget covers it") != std::string::npos) {
      leader = promoted->trial;
    }
  }
  ASSERT_TRUE(leader.has_value());
  EXPECT_EQ(replayed.trial(*leader).phase, TrialPhase::kCompleted);
  int ranked_below = 0;
  for (int64_t i = 0; i < replayed.trial_count(); ++i) {
    const Trial& t = replayed.trial(i);
    if (i != *leader && t.rung_values.contains(3)) {
      ++ranked_below;
      EXPECT_LT(t.rung_values.at(3), replayed.trial(*leader).rung_values.at(3));
    }
  }
  EXPECT_GE(ranked_below, 2);
  EXPECT_EQ(replayed.scheduler().promoted(1), 1);
}

// What a Hyperband sweep's journal shows of its brackets: each trial's first judged rung and
// where its first segment was launched to.
struct BracketCheck {
  std::vector<std::string> violations;
  std::vector<int64_t> trials_by_bracket;
  std::vector<int64_t> completed_by_bracket;
};
BracketCheck CheckBrackets(const SimResult& r, const SweepModel& replayed) {
  BracketCheck check;
  const Brackets& brackets = replayed.scheduler();
  check.trials_by_bracket.assign(static_cast<size_t>(brackets.count()), 0);
  check.completed_by_bracket.assign(static_cast<size_t>(brackets.count()), 0);
  for (int64_t i = 0; i < replayed.trial_count(); ++i) {
    auto b = static_cast<size_t>(brackets.BracketOf(i));
    ++check.trials_by_bracket[b];
    if (replayed.trial(i).phase == TrialPhase::kCompleted) ++check.completed_by_bracket[b];
  }
  bool pause = replayed.spec().mode == AshaMode::kPause;
  for (const Event& e : r.journal) {
    if (const auto* v = std::get_if<event::RungVerdict>(&e)) {
      if (v->rung < brackets.BracketOf(v->trial)) {
        check.violations.push_back("trial " + std::to_string(v->trial) + " judged at rung " +
                                   std::to_string(v->rung) + ", below its bracket");
      }
    }
    if (const auto* launch = std::get_if<event::SegmentLaunched>(&e)) {
      double first =
          pause ? replayed.rungs().at(brackets.BracketOf(launch->trial)) : replayed.rungs().max();
      if (launch->segment == 0 && launch->until != first) {
        check.violations.push_back("trial " + std::to_string(launch->trial) + " first ran to " +
                                   std::to_string(launch->until));
      }
    }
  }
  return check;
}

TEST(Simulation, HyperbandStopModeJudgesEachTrialFromItsBracketsRungAndKeepsTheBudget) {
  SimOptions o;
  o.algorithm = Algorithm::kHyperband;
  SimResult r = SimulateThousand("hyperband stop mode", o, TrialPhase::kStopped);
  BracketCheck check = CheckBrackets(r, Replay(o, r.journal));
  EXPECT_THAT(check.violations, ::testing::IsEmpty());
  // Trials are dealt 27, 12, 6 and 4 of every 49 (1000 = 20 cycles and 20 trials).
  EXPECT_NEAR(check.trials_by_bracket[0], 27 * 1000 / 49.0, 1.5);
  EXPECT_NEAR(check.trials_by_bracket[3], 4 * 1000 / 49.0, 1.5);
  // The last bracket runs every trial to the full resource; only crashes stop one short.
  EXPECT_GE(check.completed_by_bracket[3], 0.9 * static_cast<double>(check.trials_by_bracket[3]));
  // The hedge: more trials reach the full resource than under ASHA, for the same trials.
  SimOptions asha = o;
  asha.algorithm = Algorithm::kAsha;
  SimResult a = Simulate(asha);
  EXPECT_GT(r.counts.at(TrialPhase::kCompleted), a.counts.at(TrialPhase::kCompleted));
  EXPECT_GT(r.counts.at(TrialPhase::kStopped), 500);  // still, most are stopped early
}

TEST(Simulation, HyperbandPauseModePausesEachTrialFirstAtItsBracketsRung) {
  SimOptions o;
  o.algorithm = Algorithm::kHyperband;
  o.mode = AshaMode::kPause;
  o.gpus = 2;
  o.budget_gpu_hours = 40;
  SimResult r = SimulateThousand("hyperband pause mode", o, TrialPhase::kPaused);
  SweepModel replayed = Replay(o, r.journal);
  BracketCheck check = CheckBrackets(r, replayed);
  EXPECT_THAT(check.violations, ::testing::IsEmpty());
  // Every bracket that judges promoted someone, and no rung promoted past its 1/η quota.
  for (int rung = 0; rung < replayed.scheduler().decision_rungs(); ++rung) {
    EXPECT_GT(replayed.scheduler().promoted(rung), 0) << "rung " << rung;
  }
  std::vector<int64_t> promoted_from(4, 0);
  for (const Event& e : r.journal) {
    const auto* p = std::get_if<event::TrialPromoted>(&e);
    if (p && p->message.empty()) ++promoted_from[static_cast<size_t>(p->rung)];
  }
  for (int rung = 0; rung < 3; ++rung) {
    EXPECT_LE(promoted_from[static_cast<size_t>(rung)],
              replayed.scheduler().recorded(rung) / 3 + replayed.scheduler().count());
  }
}

// How far a learning rate is from the simulated trainer's best (3e-3), in decades.
double DecadesFromBest(const Config& params) {
  for (const auto& [name, value] : params) {
    if (name == "lr") return std::fabs(std::log10(value.get<double>() / 3e-3));
  }
  return 0;
}

// pbt and pb2 over a population of 16: every trial reaches the full resource within the budget,
// the journal replays to the same sweep, and exploiting moves the population's learning rates
// toward the best one.
TEST(Simulation, PbtAndPb2TrainThePopulationToTheEndAndMoveItTowardTheBestLearningRate) {
  for (Algorithm algorithm : {Algorithm::kPbt, Algorithm::kPb2}) {
    SimOptions o;
    o.algorithm = algorithm;
    o.mode = AshaMode::kPause;
    o.max_trials = 16;
    o.crash_probability = 0.01;
    SimResult r = Simulate(o);
    SCOPED_TRACE(AlgorithmName(algorithm));
    EXPECT_EQ(r.phase, SweepPhase::kCompleted);
    ExpectSoundSweep(o, r);
    EXPECT_EQ(r.trials, 16);
    EXPECT_GE(r.counts.at(TrialPhase::kCompleted), 14);
    SweepModel replayed = Replay(o, r.journal);
    int exploits = 0;
    for (const Event& e : r.journal) exploits += std::holds_alternative<event::TrialExploited>(e);
    EXPECT_GT(exploits, 16);
    double before = 0;
    double after = 0;
    for (int64_t i = 0; i < replayed.trial_count(); ++i) {
      const Trial& t = replayed.trial(i);
      before += DecadesFromBest(t.lineage.empty() ? t.params : t.lineage.front().previous);
      after += DecadesFromBest(t.params);
    }
    std::printf(
        "%s: %d exploits; mean decades from the best lr %.2f at creation, %.2f at the end\n",
        AlgorithmName(algorithm), exploits, before / 16, after / 16);
    EXPECT_LT(after, 0.6 * before);
  }
}

}  // namespace
}  // namespace bsw
