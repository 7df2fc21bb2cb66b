#ifndef BSW_CORE_ASHA_H_
#define BSW_CORE_ASHA_H_

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "operator/core/api.h"

namespace bsw {

// The rung milestones of a sweep: min × η^k below max, then max itself.
class Rungs {
 public:
  Rungs(double min, double max, int reduction_factor);
  // The sweep's rungs; pbt and pb2 pause every spec.perturbation_interval units instead
  // (interval · k below max, then max).
  explicit Rungs(const SweepSpec& spec);

  const std::vector<double>& milestones() const { return milestones_; }
  int size() const { return static_cast<int>(milestones_.size()); }
  double at(int rung) const { return milestones_[static_cast<size_t>(rung)]; }
  double max() const { return milestones_.back(); }

  // Returns the index of the rung whose milestone is `resource`, or -1 if it is none.
  int IndexOf(double resource) const;
  // Returns the first milestone strictly above `resource`, or max() when there is none.
  double NextAfter(double resource) const;

 private:
  std::vector<double> milestones_;
};

// Asynchronous successive halving over the decision rungs (every rung but the last).
//
// Stop mode: Record() says, at the moment a trial's value arrives, whether it is in the top 1/η of
// the values recorded at that rung so far (the first trials are compared with fewer values; one
// value alone always continues). Pause mode: Candidates() lists the best not-yet-promoted
// trial among the top floor(n/η) of the highest rung that has one; a rung never promotes more
// than floor(n/η) trials in all.
//
// Every operation costs O(rungs × log n): 100k trials is a normal case.
// NaN values rank below every number.
class AshaScheduler {
 public:
  struct Promotion {
    int64_t trial;
    int rung;  // the rung it was promoted from
  };
  // What a rung said of a value when it arrived (stop mode's verdict is taken from it).
  struct Arrival {
    bool in_top = false;  // what Record() returned
    int64_t values = 0;   // the values recorded at the rung then, this one included
  };

  // In stop mode no promotion is ever taken, so the scheduler keeps no candidates (and Candidates()
  // is empty): stop-mode decisions then touch only the two heaps.
  AshaScheduler(int decision_rungs, int reduction_factor, Goal goal,
                AshaMode mode = AshaMode::kPause);

  // Records `value` as the objective of `trial` at `rung`. REQUIRES: trial >= 0 (trial indexes
  // are dense, from 0). Returns true when the trial is among the
  // top 1/η at that rung (stop mode: continue). Recording the same trial at the same rung again
  // changes nothing and returns the same answer as the first time.
  bool Record(int64_t trial, int rung, double value);

  // Pause mode: up to `limit` eligible promotions, in the order they should be taken: the highest
  // rung first, the best value first within a rung, never taking a rung past floor(n/η)
  // promotions in all. Taking one is MarkPromoted's job.
  std::vector<Promotion> Candidates(size_t limit) const;

  // Pause mode: the best trial neither promoted nor withdrawn at the highest rung that has one,
  // whatever the floor(n/η) quota says; nullopt in stop mode or when there is none. It is the
  // first of Candidates() whenever the quota allows it. O(rungs × log n) while that rung's top set
  // holds such a trial; otherwise it looks through the rest of that rung.
  std::optional<Promotion> Leader() const;

  // Marks `trial` as promoted from `rung` (replaying a journal), or as gone on past it without a
  // pause (a segment that runs through the rung). Unknown trials are ignored.
  void MarkPromoted(int64_t trial, int rung);

  // Takes `trial` out of promotion for good: it stopped or failed and can never resume. Its values
  // still rank the others.
  void Withdraw(int64_t trial);

  int64_t recorded(int rung) const;
  int64_t promoted(int rung) const;
  // The score `trial` was recorded with at `rung`: higher is better, whatever the goal.
  // REQUIRES: Record(trial, rung, ...) was called.
  double ScoreAt(int64_t trial, int rung) const;
  // What the rung said when `trial`'s value arrived; nullopt when it has none there.
  std::optional<Arrival> ArrivalOf(int64_t trial, int rung) const;
  int decision_rungs() const { return static_cast<int>(rungs_.size()); }

 private:
  struct Entry {
    double score;  // higher is better, whatever the goal
    int64_t trial;
    // Orders better entries first; ties go to the earlier trial.
    bool operator<(const Entry& o) const {
      return score != o.score ? score > o.score : trial < o.trial;
    }
  };
  // What a rung knows of one trial. Trials are dense indexes, so rungs keep these in a vector.
  struct TrialAtRung {
    double score = 0;
    bool recorded = false;
    bool first_answer = false;  // what Record() said when the value arrived
    int64_t recorded_then = 0;  // RungState::recorded then
    bool promoted = false;
    bool in_top = false;
  };
  // The top set and the rest are binary heaps in contiguous memory (the worst of the top and the
  // best of the rest at their fronts): a decision touches O(log n) nearby entries, which keeps its
  // cost nearly flat from a thousand trials to a hundred thousand.
  struct RungState {
    std::vector<Entry> top;      // the best floor(n/η) recorded values
    std::vector<Entry> rest;     // all other recorded values
    std::set<Entry> candidates;  // members of `top` neither promoted nor withdrawn
    std::vector<TrialAtRung> trials;
    int64_t recorded = 0;
    int64_t promoted = 0;
  };

  void MoveBestOfRestToTop(RungState& r);
  void MoveWorstOfTopToRest(RungState& r);
  bool Withdrawn(int64_t trial) const;

  int reduction_factor_;
  Goal goal_;
  bool tracks_candidates_;
  std::vector<RungState> rungs_;
  std::vector<bool> withdrawn_;
};

}  // namespace bsw

#endif  // BSW_CORE_ASHA_H_
