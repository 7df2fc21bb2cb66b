#ifndef BSW_CORE_SWEEP_MODEL_H_
#define BSW_CORE_SWEEP_MODEL_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "operator/core/api.h"
#include "operator/core/asha.h"
#include "operator/core/brackets.h"
#include "operator/core/event.h"
#include "operator/core/ledger.h"
#include "operator/core/probe.h"
#include "operator/core/reason.h"
#include "operator/core/search_space.h"

namespace bsw {

enum class TrialPhase { kRunning, kPaused, kCompleted, kStopped, kFailed };
const char* TrialPhaseName(TrialPhase phase);
// The deterministic name of a sweep's trial: "<sweep>-t0007".
std::string TrialName(const std::string& sweep, int64_t index);

struct SegmentRecord {
  int number = 0;
  double from = 0;   // resource at launch
  double until = 0;  // the trainer exits on reaching it
  double deadline = 0;
  double launched_at = 0;
  bool ended = false;
  // The charge as recorded when it ended; started == 0: it never ran.
  double started = 0;
  double finished = 0;
  int devices = 0;
  // It ended as planned at `until`, whose value the trial reported: the trainer's checkpoint
  // there is kept (pbt and pb2 ask for a snapshot at each pause), so another trial may go on
  // from it.
  bool reached_until = false;
  // One per rung value it reported: the seconds from its start (so start-up included) and the
  // units from `from`. What the trial costs when it goes on or resumes.
  std::vector<CostPoint> measured;
};

// A rung's verdict on a trial, as its record shows it beside the rung's value.
struct RungVerdict {
  Verdict verdict = Verdict::kContinue;
  std::string message;  // why, for a stop or a promotion outside the 1/η quota
};

// pbt and pb2: the trial went on from another trial's checkpoint (event::TrialExploited).
struct Exploit {
  double resource = 0;  // the rung's
  int64_t donor = -1;
  size_t segments_before = 0;  // the trial's segments before it
  Config previous;             // the trial's parameters before
  std::string message;
};

struct Trial {
  int64_t index = 0;
  std::string name;
  Config params;
  TrialPhase phase = TrialPhase::kRunning;
  std::string reason;  // why it stopped or failed
  std::string message;
  std::map<double, double> rung_values;         // objective at each rung's resource
  std::map<double, RungVerdict> rung_verdicts;  // by the rung's resource, as rung_values
  std::vector<SegmentRecord> segments;
  int failures = 0;
  bool stop_requested = false;
  std::vector<Exploit> lineage;  // oldest first

  double progress() const { return rung_values.empty() ? 0 : rung_values.rbegin()->first; }
  // Stop mode: the first rung verdict against the trial, if any; the planner then stops it.
  const RungVerdict* StopVerdict() const;
};

// A segment that the trainer itself ended badly (reason Error, Lost or Diverged). The newest
// kRecentFailures are kept for the status, so that a failure's reason is where users look.
struct FailureRecord {
  int64_t trial = -1;
  int segment = 0;
  std::string reason;
  std::string message;
  std::string output;  // the end of the trainer's output, when the backend had it
};
inline constexpr size_t kRecentFailures = 5;

struct BestResult {
  int64_t trial = -1;
  double value = 0;
  double resource = 0;
};

// Everything the sweep decided so far. It changes only through Apply(event).
class SweepModel {
 public:
  explicit SweepModel(const SweepSpec& spec);

  // Applies one event. Events that refer to unknown trials are rejected, and the model is
  // unchanged.
  Status Apply(const Event& event);

  const SweepSpec& spec() const { return spec_; }
  const Rungs& rungs() const { return rungs_; }
  const SearchSpace& search_space() const { return space_; }
  const Brackets& scheduler() const { return scheduler_; }
  const CostModel& cost_model() const { return cost_; }

  int64_t trial_count() const { return static_cast<int64_t>(trials_.size()); }
  const Trial& trial(int64_t index) const { return *trials_.at(static_cast<size_t>(index)); }
  std::optional<int64_t> FindTrial(const std::string& name) const;
  // Trials in phase Running, ascending by index.
  const std::set<int64_t>& active() const { return active_; }
  int64_t count(TrialPhase phase) const { return counts_[static_cast<size_t>(phase)]; }

  std::string TrialName(int64_t index) const;

  // Stop mode: how many values each rung continued.
  int64_t continued(int rung) const { return continued_.at(static_cast<size_t>(rung)); }
  // Stop mode: the (trial, rung resource) values that a rung judges with no verdict recorded yet,
  // in order: the values of the pass being decided, and those of a journal written before
  // verdicts were journaled. The planner records their verdicts (JudgeValues).
  const std::set<std::pair<int64_t, double>>& unjudged() const { return unjudged_; }
  std::optional<BestResult> best() const { return best_; }
  // The newest failures, oldest first; at most kRecentFailures.
  const std::deque<FailureRecord>& recent_failures() const { return recent_failures_; }

  // The probe phase: every probe run so far, by index, and its outcome once decided.
  const std::vector<ProbeRun>& probes() const { return probes_; }
  const std::optional<ThroughputDecision>& throughput_decision() const { return decision_; }
  // Whether the sweep is still in its probe phase: spec.throughput.enabled, not decided, and no
  // trial created yet (a spec that enables it mid-sweep does not stop the search to probe).
  bool probing() const {
    return spec_.throughput.enabled && !decision_ && !finished() && trials_.empty();
  }
  std::string ProbeName(int index) const;

  SweepPhase phase() const { return phase_; }
  const std::string& finish_reason() const { return finish_reason_; }
  const std::string& finish_message() const { return finish_message_; }
  bool finished() const {
    return phase_ != SweepPhase::kPending && phase_ != SweepPhase::kProbing &&
           phase_ != SweepPhase::kRunning;
  }

 private:
  // Events about trials end the probe phase.
  void LeaveProbePhase();
  // The trial an event is about, after LeaveProbePhase; null when unknown (and the phase is left
  // as it was, as for every rejected event).
  Trial* TrialFor(int64_t index);
  void SetPhase(Trial& t, TrialPhase phase);
  void RecordValue(Trial& t, const event::ValueRecorded& e);
  void SetVerdict(Trial& t, double resource, RungVerdict verdict);
  void EndSegment(Trial& t, const event::SegmentEnded& e);
  Status On(const event::TrialCreated& e);
  Status On(const event::SegmentLaunched& e);
  Status On(const event::ValueRecorded& e);
  Status On(const event::DeadlineMoved& e);
  Status On(const event::TrialStopped& e);
  Status On(const event::TrialPromoted& e);
  Status On(const event::SegmentEnded& e);
  Status On(const event::SweepFinished& e);
  Status On(const event::ProbeLaunched& e);
  Status On(const event::ProbeMeasured& e);
  Status On(const event::ProbeEnded& e);
  Status On(const event::ThroughputDecided& e);
  Status On(const event::RungVerdict& e);
  Status On(const event::TrialExploited& e);

  SweepSpec spec_;
  Rungs rungs_;
  SearchSpace space_;
  Brackets scheduler_;
  CostModel cost_;
  // Shared between copies of the model until one changes a trial (TrialFor copies it first): a
  // pass decides on a copy (Decide), which costs a pointer per trial rather than the trials.
  std::vector<std::shared_ptr<Trial>> trials_;
  std::set<int64_t> active_;
  std::vector<int64_t> counts_ = std::vector<int64_t>(5, 0);
  std::vector<int64_t> continued_;
  std::set<std::pair<int64_t, double>> unjudged_;
  std::optional<BestResult> best_;
  std::deque<FailureRecord> recent_failures_;
  std::vector<ProbeRun> probes_;
  std::optional<ThroughputDecision> decision_;
  SweepPhase phase_ = SweepPhase::kPending;
  std::string finish_reason_;
  std::string finish_message_;
};

}  // namespace bsw

#endif  // BSW_CORE_SWEEP_MODEL_H_
