// A whole sweep simulated in core, with no controller, backend or cluster: the planner loop as the
// controller runs it (charge the ledger, record new rung values, plan, journal, act) on a
// simulated clock, against trials that follow a seeded learning curve, start up to 2 s late and
// crash now and then (tests/fixtures/simulated-trainer, as in tests/unit/core/simulation_test.cc).
// One pass every
// --pass-seconds of simulated time.
//
//   sweep_sim_bench --sweep=bench/operator/sweep_20k.yaml --journal-dir=DIR
//   sweep_sim_bench --sweep=bench/operator/sweep_20k.yaml --trials=1000    a quick look
//
// --trials overrides spec.maxTrials (and maxFailedTrials). With --journal-dir the sweep's events
// are written to DIR/journal.jsonl, as `budgetsweep run` journals them, after the timed part.
// Prints one JSON object: the sweep's size and outcome, the wall time of the simulation, and the
// process's peak RSS.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "base/overloaded.h"
#include "nlohmann/json.hpp"
#include "operator/adapters/yaml/sweep_file.h"
#include "operator/controller/journal.h"
#include "operator/core/api.h"
#include "operator/core/planner.h"
#include "operator/core/random.h"
#include "operator/core/step.h"
#include "operator/core/sweep_model.h"
#include "tests/fixtures/simulated-trainer/simulated_trainer.h"

namespace bsw {
namespace {

struct BenchOptions {
  std::string sweep_file;
  std::string journal_dir;
  int trials = 0;  // 0: the file's maxTrials
  double pass_seconds = 2;
  double crash_probability = 0.01;  // per segment
};

// The simulated backend runs trial segments only: the bench's sweeps have no throughput probe.
constexpr char kNoProbes[] = "sweep_sim_bench simulates no throughput probe: drop spec.throughput";

// The sweep, its clock and its simulated trials. Pass() is one controller pass; Advance() moves
// the clock on, running every live segment as a kubelet would (a deadline kills it).
class Simulation {
 public:
  Simulation(const SweepSpec& spec, const BenchOptions& options)
      : spec_(spec),
        model_(std::make_shared<const SweepModel>(spec)),
        options_(options),
        rng_(MixSeed(spec.seed, 77)) {
    planner_.deadlines_only_shrink = true;  // as on a cluster
  }

  Status Pass() {
    Ledger ledger(spec_.budget_gpu_hours * 3600);
    Observation observation;
    observation.now = now_;
    observation.segments.reserve(segments_.size());
    for (const auto& [key, s] : segments_) observation.segments.push_back(s);
    ledger.Observe(observation.segments, now_);
    observation.metrics = metrics_;
    StatusOr<Step> step = Decide(*model_, observation, ledger, memory_, std::nullopt, planner_);
    if (!step.ok()) return step.status();
    journal_.insert(journal_.end(), step->events.begin(), step->events.end());
    model_ = step->model;
    memory_ = std::move(step->next);
    for (const StepAction& a : step->actions) Carry(a);
    // The values of a segment that ended before this pass are recorded now.
    for (const std::string& name : ended_) metrics_.erase(name);
    ended_.clear();
    ++passes_;
    return OkStatus();
  }

  void Advance() {
    now_ += options_.pass_seconds;
    for (auto it = live_.begin(); it != live_.end();) {
      Run& run = it->second;
      SegmentStatus& s = segments_.at(it->first);
      it = RunUntilNow(run, s) ? std::next(it) : live_.erase(it);
    }
  }

  bool Done() const { return model_->finished() && live_.empty(); }
  const SweepModel& model() const { return *model_; }
  const std::vector<Event>& journal() const { return journal_; }
  int passes() const { return passes_; }
  double simulated_seconds() const { return now_ - kStart; }

 private:
  static constexpr double kStart = 1'700'000'000;

  using Run = testing::SimulatedRun;

  void Carry(const StepAction& action) {
    std::visit(Overloaded{[&](const Launch& a) { Start(a.spec); },
                          [&](const Stop& a) {
                            auto it = live_.find({a.name, a.segment});
                            if (it != live_.end() && !it->second.stop_at) {
                              it->second.stop_at = now_ + 1;
                            }
                          },
                          [&](const MoveDeadline& a) {
                            segments_.at({a.name, a.segment}).deadline_unix_seconds = a.deadline;
                          }},
               action);
  }

  void Start(const SegmentSpec& spec) {
    auto key = std::make_pair(spec.trial, spec.segment);
    if (segments_.contains(key)) return;  // Start is idempotent
    std::optional<int64_t> trial = model_->FindTrial(spec.trial);
    if (!trial) throw std::logic_error(kNoProbes);
    Run run;
    run.trial = *trial;
    run.progress = model_->trial(*trial).progress();
    run.until = spec.until_resource;
    run.seconds_per_unit =
        4 + 4 * Random(MixSeed(spec_.seed, static_cast<uint64_t>(*trial))).Uniform();
    run.pending_until = now_ + std::floor(rng_.Uniform() * 3);
    if (rng_.Uniform() < options_.crash_probability) {
      run.crash_at = run.progress + (spec.until_resource - run.progress) * rng_.Uniform();
    }
    live_[key] = run;
    SegmentStatus s;
    s.trial = key.first;
    s.segment = spec.segment;
    s.devices = spec_.trial_gpus;
    s.deadline_unix_seconds = spec.deadline_unix_seconds;
    s.metrics_url = "sim";
    segments_[key] = s;
  }

  // Runs a live segment up to now; false once it has ended.
  bool RunUntilNow(Run& run, SegmentStatus& s) {
    if (!testing::StepSimulatedRun(run, s, now_, model_->trial(run.trial).params, spec_.seed,
                                   metrics_)) {
      return true;
    }
    ended_.push_back(s.trial);
    return false;
  }

  const SweepSpec spec_;
  std::shared_ptr<const SweepModel> model_;
  const BenchOptions options_;
  PlannerOptions planner_;
  Random rng_;
  // What the simulated backend and trainers show.
  std::map<std::pair<std::string, int>, SegmentStatus> segments_;
  std::map<std::string, TrialMetrics> metrics_;
  PassMemory memory_;
  std::map<std::pair<std::string, int>, Run> live_;
  std::vector<std::string> ended_;  // trials whose segment ended since the last pass
  std::vector<Event> journal_;
  double now_ = kStart;
  int passes_ = 0;
};

int Fail(const std::string& what, const Status& status) {
  std::fprintf(stderr, "sweep_sim_bench: %s: %s\n", what.c_str(), status.message().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  BenchOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t equals = arg.find('=');
    std::string name = arg.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : arg.substr(equals + 1);
    if (name == "--sweep") {
      options.sweep_file = value;
    } else if (name == "--journal-dir") {
      options.journal_dir = value;
    } else if (name == "--trials" && !value.empty()) {
      options.trials = std::atoi(value.c_str());
    } else if (name == "--pass-seconds" && !value.empty()) {
      options.pass_seconds = std::atof(value.c_str());
    } else if (name == "--crash-percent" && !value.empty()) {
      options.crash_probability = std::atof(value.c_str()) / 100;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (options.sweep_file.empty()) {
    std::fprintf(stderr, "--sweep=FILE is required\n");
    return 2;
  }
  StatusOr<nlohmann::json> sweep = ReadSweepFile(options.sweep_file);
  if (!sweep.ok()) return Fail("reading the sweep", sweep.status());
  if (options.trials > 0) {
    (*sweep)["spec"]["maxTrials"] = options.trials;
    (*sweep)["spec"]["maxFailedTrials"] = options.trials;
  }
  StatusOr<SweepSpec> spec = ParseSweep(*sweep);
  if (!spec.ok()) return Fail(options.sweep_file, spec.status());

  Simulation sim(*spec, options);
  auto started = std::chrono::steady_clock::now();
  while (!sim.Done()) {
    if (Status s = sim.Pass(); !s.ok()) return Fail("pass " + std::to_string(sim.passes()), s);
    sim.Advance();
  }
  std::chrono::duration<double> wall = std::chrono::steady_clock::now() - started;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);

  const SweepModel& model = sim.model();
  nlohmann::json result = {{"sweep", options.sweep_file},
                           {"trials", model.trial_count()},
                           {"phase", SweepPhaseName(model.phase())},
                           {"finish_reason", model.finish_reason()},
                           {"events", sim.journal().size()},
                           {"passes", sim.passes()},
                           {"simulated_hours", sim.simulated_seconds() / 3600},
                           {"wall_seconds", wall.count()},
                           {"peak_rss_mb", static_cast<double>(usage.ru_maxrss) / 1024},
                           {"trial_phases",
                            {{"completed", model.count(TrialPhase::kCompleted)},
                             {"stopped", model.count(TrialPhase::kStopped)},
                             {"failed", model.count(TrialPhase::kFailed)}}}};
  if (!options.journal_dir.empty()) {
    std::error_code made;
    std::filesystem::create_directories(options.journal_dir, made);
    StatusOr<Journal> journal = Journal::Open(options.journal_dir);
    if (!journal.ok()) return Fail("opening the journal", journal.status());
    if (Status s = journal->Append(sim.journal()); !s.ok()) return Fail("journaling", s);
    result["journal"] = journal->path();
  }
  std::printf("%s\n", result.dump(2).c_str());
  return 0;
}

}  // namespace
}  // namespace bsw

int main(int argc, char** argv) { return bsw::Main(argc, argv); }
