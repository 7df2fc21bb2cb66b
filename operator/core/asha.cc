#include "operator/core/asha.h"

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

AshaScheduler::AshaScheduler(int decision_rungs, int reduction_factor, Goal goal)
    : reduction_factor_(reduction_factor),
      goal_(goal),
      rungs_(static_cast<size_t>(decision_rungs)) {}

void AshaScheduler::MoveToTop(RungState& r, const Entry& e) {
  r.rest.erase(e);
  r.top.insert(e);
  if (!r.by_trial.at(e.trial).promoted && !withdrawn_.contains(e.trial)) r.candidates.insert(e);
}

void AshaScheduler::MoveToRest(RungState& r, const Entry& e) {
  r.top.erase(e);
  r.candidates.erase(e);
  r.rest.insert(e);
}

bool AshaScheduler::Record(int64_t trial, int rung, double value) {
  RungState& r = rungs_.at(static_cast<size_t>(rung));
  if (auto it = r.by_trial.find(trial); it != r.by_trial.end()) return it->second.first_answer;

  double score = std::isnan(value) ? -std::numeric_limits<double>::infinity()
                                   : (goal_ == Goal::kMaximize ? value : -value);
  Entry e{score, trial};
  Recorded& rec = r.by_trial.emplace(trial, Recorded{e, false, false}).first->second;
  r.rest.insert(e);
  // The new value may beat the worst of the top set: swap them.
  if (!r.top.empty() && e < *r.top.rbegin()) {
    Entry worst = *r.top.rbegin();
    MoveToRest(r, worst);
    MoveToTop(r, e);
  }
  auto n = static_cast<int64_t>(r.by_trial.size());
  auto k = static_cast<size_t>(n / reduction_factor_);
  while (r.top.size() < k && !r.rest.empty()) MoveToTop(r, *r.rest.begin());

  // With fewer than η values the top set is empty; the best value so far continues.
  rec.first_answer = k > 0 ? r.top.contains(e) : !(*r.rest.begin() < e);
  return rec.first_answer;
}

std::vector<AshaScheduler::Promotion> AshaScheduler::Candidates(size_t limit) const {
  std::vector<Promotion> out;
  for (int rung = static_cast<int>(rungs_.size()) - 1; rung >= 0 && out.size() < limit; --rung) {
    const RungState& r = rungs_[static_cast<size_t>(rung)];
    // The top set changes as better values arrive, so a trial promoted earlier may have left it:
    // cap the rung's promotions at floor(n/η) in all, not only at the current top set.
    int64_t allowed = static_cast<int64_t>(r.by_trial.size()) / reduction_factor_ - r.promoted;
    for (const Entry& e : r.candidates) {
      if (out.size() == limit || allowed <= 0) break;
      out.push_back(Promotion{e.trial, rung});
      --allowed;
    }
  }
  return out;
}

void AshaScheduler::MarkPromoted(int64_t trial, int rung) {
  RungState& r = rungs_.at(static_cast<size_t>(rung));
  auto it = r.by_trial.find(trial);
  if (it == r.by_trial.end() || it->second.promoted) return;
  it->second.promoted = true;
  r.candidates.erase(it->second.entry);
  ++r.promoted;
}

void AshaScheduler::Withdraw(int64_t trial) {
  withdrawn_.insert(trial);
  for (RungState& r : rungs_) {
    if (auto it = r.by_trial.find(trial); it != r.by_trial.end()) {
      r.candidates.erase(it->second.entry);
    }
  }
}

int64_t AshaScheduler::recorded(int rung) const {
  return static_cast<int64_t>(rungs_.at(static_cast<size_t>(rung)).by_trial.size());
}

int64_t AshaScheduler::promoted(int rung) const {
  return rungs_.at(static_cast<size_t>(rung)).promoted;
}

}  // namespace bsw
