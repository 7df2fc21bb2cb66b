#include "operator/core/asha.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bsw {
namespace {
// Milestones closer than this (relative) are the same milestone; it absorbs rounding in min × η^k.
constexpr double kRelativeTolerance = 1e-9;

bool Same(double a, double b) { return std::fabs(a - b) <= kRelativeTolerance * std::fabs(b); }
}  // namespace

Rungs::Rungs(double min, double max, int reduction_factor) {
  for (double r = min; r < max && !Same(r, max); r *= reduction_factor) milestones_.push_back(r);
  milestones_.push_back(max);
}

Rungs::Rungs(const SweepSpec& spec) {
  if (!Population(spec.algorithm)) {
    *this = Rungs(spec.resource_min, spec.resource_max, spec.reduction_factor);
    return;
  }
  for (int k = 1; k <= kMaxPopulationIntervals; ++k) {
    double r = spec.perturbation_interval * k;
    if (r >= spec.resource_max || Same(r, spec.resource_max)) break;
    milestones_.push_back(r);
  }
  milestones_.push_back(spec.resource_max);
}

int Rungs::IndexOf(double resource) const {
  for (size_t i = 0; i < milestones_.size(); ++i) {
    if (Same(resource, milestones_[i])) return static_cast<int>(i);
  }
  return -1;
}

double Rungs::NextAfter(double resource) const {
  for (double m : milestones_) {
    if (m > resource && !Same(resource, m)) return m;
  }
  return max();
}

AshaScheduler::AshaScheduler(int decision_rungs, int reduction_factor, Goal goal, AshaMode mode)
    : reduction_factor_(reduction_factor),
      goal_(goal),
      tracks_candidates_(mode == AshaMode::kPause),
      rungs_(static_cast<size_t>(decision_rungs)) {}

namespace {
// Heap orders: the front of `top` is its worst entry, the front of `rest` its best.
template <typename E>
bool TopOrder(const E& a, const E& b) {
  return a < b;
}
template <typename E>
bool RestOrder(const E& a, const E& b) {
  return b < a;
}
}  // namespace

bool AshaScheduler::Withdrawn(int64_t trial) const {
  return static_cast<size_t>(trial) < withdrawn_.size() && withdrawn_[static_cast<size_t>(trial)];
}

void AshaScheduler::MoveBestOfRestToTop(RungState& r) {
  std::pop_heap(r.rest.begin(), r.rest.end(), RestOrder<Entry>);
  Entry e = r.rest.back();
  r.rest.pop_back();
  r.top.push_back(e);
  std::push_heap(r.top.begin(), r.top.end(), TopOrder<Entry>);
  TrialAtRung& t = r.trials[static_cast<size_t>(e.trial)];
  t.in_top = true;
  if (tracks_candidates_ && !t.promoted && !Withdrawn(e.trial)) r.candidates.insert(e);
}

void AshaScheduler::MoveWorstOfTopToRest(RungState& r) {
  std::pop_heap(r.top.begin(), r.top.end(), TopOrder<Entry>);
  Entry e = r.top.back();
  r.top.pop_back();
  r.rest.push_back(e);
  std::push_heap(r.rest.begin(), r.rest.end(), RestOrder<Entry>);
  r.trials[static_cast<size_t>(e.trial)].in_top = false;
  r.candidates.erase(e);
}

bool AshaScheduler::Record(int64_t trial, int rung, double value) {
  RungState& r = rungs_.at(static_cast<size_t>(rung));
  auto index = static_cast<size_t>(trial);
  if (index >= r.trials.size()) r.trials.resize(std::max(index + 1, r.trials.size() * 2));
  if (r.trials[index].recorded) return r.trials[index].first_answer;

  double score = std::isnan(value) ? -std::numeric_limits<double>::infinity()
                                   : (goal_ == Goal::kMaximize ? value : -value);
  Entry e{score, trial};
  r.trials[index].score = score;
  r.trials[index].recorded = true;
  ++r.recorded;
  r.rest.push_back(e);
  std::push_heap(r.rest.begin(), r.rest.end(), RestOrder<Entry>);
  // A new value that beats the worst of the top set is now the best of the rest: swap them.
  if (!r.top.empty() && e < r.top.front()) {
    MoveWorstOfTopToRest(r);
    MoveBestOfRestToTop(r);
  }
  auto k = static_cast<size_t>(r.recorded / reduction_factor_);
  while (r.top.size() < k && !r.rest.empty()) MoveBestOfRestToTop(r);

  // With fewer than η values the top set is empty; the best value so far continues.
  TrialAtRung& t = r.trials[index];
  t.first_answer = k > 0 ? t.in_top : r.rest.front().trial == trial;
  t.recorded_then = r.recorded;
  return t.first_answer;
}

std::vector<AshaScheduler::Promotion> AshaScheduler::Candidates(size_t limit) const {
  std::vector<Promotion> out;
  for (int rung = static_cast<int>(rungs_.size()) - 1; rung >= 0 && out.size() < limit; --rung) {
    const RungState& r = rungs_[static_cast<size_t>(rung)];
    // The top set changes as better values arrive, so a trial promoted earlier may have left it:
    // cap the rung's promotions at floor(n/η) in all, not only at the current top set.
    int64_t allowed = r.recorded / reduction_factor_ - r.promoted;
    for (const Entry& e : r.candidates) {
      if (out.size() == limit || allowed <= 0) break;
      out.push_back(Promotion{e.trial, rung});
      --allowed;
    }
  }
  return out;
}

std::optional<AshaScheduler::Promotion> AshaScheduler::Leader() const {
  if (!tracks_candidates_) return std::nullopt;
  for (int rung = static_cast<int>(rungs_.size()) - 1; rung >= 0; --rung) {
    const RungState& r = rungs_[static_cast<size_t>(rung)];
    // Every value in the top set is better than every other, so its best candidate is the leader.
    if (!r.candidates.empty()) return Promotion{r.candidates.begin()->trial, rung};
    const Entry* best = nullptr;
    for (const Entry& e : r.rest) {
      if (r.trials[static_cast<size_t>(e.trial)].promoted || Withdrawn(e.trial)) continue;
      if (best == nullptr || e < *best) best = &e;
    }
    if (best != nullptr) return Promotion{best->trial, rung};
  }
  return std::nullopt;
}

void AshaScheduler::MarkPromoted(int64_t trial, int rung) {
  RungState& r = rungs_.at(static_cast<size_t>(rung));
  auto index = static_cast<size_t>(trial);
  if (trial < 0 || index >= r.trials.size() || !r.trials[index].recorded) return;
  TrialAtRung& t = r.trials[index];
  if (t.promoted) return;
  t.promoted = true;
  r.candidates.erase(Entry{t.score, trial});
  ++r.promoted;
}

void AshaScheduler::Withdraw(int64_t trial) {
  auto index = static_cast<size_t>(trial);
  if (index >= withdrawn_.size()) withdrawn_.resize(std::max(index + 1, withdrawn_.size() * 2));
  withdrawn_[index] = true;
  for (RungState& r : rungs_) {
    if (index < r.trials.size() && r.trials[index].in_top) {
      r.candidates.erase(Entry{r.trials[index].score, trial});
    }
  }
}

int64_t AshaScheduler::recorded(int rung) const {
  return rungs_.at(static_cast<size_t>(rung)).recorded;
}

int64_t AshaScheduler::promoted(int rung) const {
  return rungs_.at(static_cast<size_t>(rung)).promoted;
}

std::optional<AshaScheduler::Arrival> AshaScheduler::ArrivalOf(int64_t trial, int rung) const {
  const RungState& r = rungs_.at(static_cast<size_t>(rung));
  auto index = static_cast<size_t>(trial);
  if (trial < 0 || index >= r.trials.size() || !r.trials[index].recorded) return std::nullopt;
  return Arrival{r.trials[index].first_answer, r.trials[index].recorded_then};
}

double AshaScheduler::ScoreAt(int64_t trial, int rung) const {
  return rungs_.at(static_cast<size_t>(rung)).trials.at(static_cast<size_t>(trial)).score;
}

}  // namespace bsw
