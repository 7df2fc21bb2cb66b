#ifndef BSW_CORE_BRACKETS_H_
#define BSW_CORE_BRACKETS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "operator/core/api.h"
#include "operator/core/asha.h"

namespace bsw {

// Hyperband's bracket assignment (Li et al., 2018, "Hyperband: A Novel Bandit-Based Approach to
// Hyperparameter Optimization"), over a sweep of `rungs` rungs (so s_max = rungs - 1) and
// reduction factor `reduction_factor` (η). Bracket b starts its trials at rung b: they train to
// that rung's resource before anything judges them, and bracket rungs - 1 runs every trial to the
// full resource. Bracket b's share of new trials is Hyperband's bracket size
// n_b = ceil(rungs / (rungs - b) · η^(rungs - 1 - b)), and the brackets take turns (smooth
// weighted round robin), so every bracket is served from the first trials on.
//
// Returns one cycle of the assignment: trial i belongs to bracket cycle[i % cycle.size()]. The
// cycle is at most kMaxHyperbandCycle long; larger sizes are scaled down in proportion, keeping at
// least one trial per bracket. REQUIRES: rungs >= 1, reduction_factor >= 2.
std::vector<int> HyperbandCycle(int rungs, int reduction_factor);
inline constexpr size_t kMaxHyperbandCycle = 4096;

// Hyperband's brackets start at rungs 0 .. kMaxHyperbandBrackets - 1 at most: a sweep of more
// rungs (a resource range of η^32 or more, which only a hostile spec asks for) would otherwise hold
// a scheduler state per bracket and rung, quadratic in its rungs.
inline constexpr int kMaxHyperbandBrackets = 32;

// The sweep's rung decisions as brackets of asynchronous successive halving over the same rungs:
// one bracket that starts at rung 0 for ASHA, one per starting rung for Hyperband. Each bracket
// is an AshaScheduler over its own rungs, so a trial is judged only against the trials of its own
// bracket; pause-mode promotions are taken across brackets from the highest rung first, the best
// value first within a rung. Rungs here are the sweep's rung indexes.
class Brackets {
 public:
  using Promotion = AshaScheduler::Promotion;

  Brackets(const SweepSpec& spec, int decision_rungs);

  int count() const { return static_cast<int>(brackets_.size()); }
  // The bracket of trial `trial`, which is the rung it starts at. REQUIRES: trial >= 0.
  int BracketOf(int64_t trial) const;
  // How many of trials 0 .. trials - 1 belong to bracket `bracket`.
  int64_t TrialsIn(int bracket, int64_t trials) const;

  // Records `value` as the objective of `trial` at `rung` in the trial's bracket. Returns nullopt
  // when its bracket does not judge at that rung (a rung below its start, or the last rung), else
  // whether it is in the top 1/η there (AshaScheduler::Record).
  std::optional<bool> Record(int64_t trial, int rung, double value);
  // As AshaScheduler's, across the brackets.
  std::vector<Promotion> Candidates(size_t limit) const;
  std::optional<Promotion> Leader() const;
  void MarkPromoted(int64_t trial, int rung);
  void Withdraw(int64_t trial);

  // Values judged (and promotions taken) at `rung`, over every bracket.
  int64_t recorded(int rung) const;
  int64_t promoted(int rung) const;
  // What `trial`'s bracket said of its value at `rung` when it arrived (AshaScheduler::ArrivalOf);
  // nullopt when the bracket does not judge that rung or has no value of the trial there.
  std::optional<AshaScheduler::Arrival> ArrivalOf(int64_t trial, int rung) const;
  int decision_rungs() const { return decision_rungs_; }

 private:
  // Whether promotion `a` is taken before `b`: the higher rung, then the better value.
  bool Before(const Promotion& a, const Promotion& b) const;
  // `tally` (recorded or promoted) at sweep rung `rung`, summed over the brackets that judge it.
  int64_t SumAt(int rung, int64_t (AshaScheduler::*tally)(int) const) const;

  int decision_rungs_;
  std::vector<AshaScheduler> brackets_;  // bracket b judges rungs b .. decision_rungs_ - 1
  std::vector<int> cycle_;
};

}  // namespace bsw

#endif  // BSW_CORE_BRACKETS_H_
