#include "operator/core/brackets.h"

#include <algorithm>
#include <cmath>

namespace bsw {

std::vector<int> HyperbandCycle(int rungs, int reduction_factor) {
  std::vector<double> sizes;
  double total = 0;
  for (int b = 0; b < rungs; ++b) {
    double n = std::ceil(static_cast<double>(rungs) / (rungs - b) *
                         std::pow(static_cast<double>(reduction_factor), rungs - 1 - b));
    sizes.push_back(n);
    total += n;
  }
  if (total > static_cast<double>(kMaxHyperbandCycle)) {
    for (double& n : sizes) {
      n = std::max(1.0, std::floor(n * static_cast<double>(kMaxHyperbandCycle) / total));
    }
  }
  // Smooth weighted round robin: each turn every bracket gains its size, the one with the most
  // takes the turn and pays the cycle's length. Ties go to the lower bracket.
  std::vector<double> credit(sizes.size(), 0);
  double length = 0;
  for (double n : sizes) length += n;
  std::vector<int> cycle;
  for (int turn = 0; turn < static_cast<int>(length); ++turn) {
    size_t chosen = 0;
    for (size_t b = 0; b < sizes.size(); ++b) {
      credit[b] += sizes[b];
      if (credit[b] > credit[chosen]) chosen = b;
    }
    credit[chosen] -= length;
    cycle.push_back(static_cast<int>(chosen));
  }
  return cycle;
}

Brackets::Brackets(const SweepSpec& spec, int decision_rungs) : decision_rungs_(decision_rungs) {
  int count = spec.algorithm == Algorithm::kHyperband
                  ? std::min(decision_rungs + 1, kMaxHyperbandBrackets)
                  : 1;
  for (int b = 0; b < count; ++b) {
    brackets_.emplace_back(decision_rungs - b, spec.reduction_factor, spec.goal, spec.mode);
  }
  cycle_ = count > 1 ? HyperbandCycle(count, spec.reduction_factor) : std::vector<int>{0};
}

int Brackets::BracketOf(int64_t trial) const {
  return cycle_[static_cast<size_t>(trial) % cycle_.size()];
}

int64_t Brackets::TrialsIn(int bracket, int64_t trials) const {
  auto length = static_cast<int64_t>(cycle_.size());
  auto in = [&](int64_t end) { return std::count(cycle_.begin(), cycle_.begin() + end, bracket); };
  return trials / length * in(length) + in(trials % length);
}

std::optional<bool> Brackets::Record(int64_t trial, int rung, double value) {
  int b = BracketOf(trial);
  if (rung < b || rung >= decision_rungs_) return std::nullopt;
  return brackets_[static_cast<size_t>(b)].Record(trial, rung - b, value);
}

bool Brackets::Before(const Promotion& a, const Promotion& b) const {
  if (a.rung != b.rung) return a.rung > b.rung;
  double score_a = brackets_[static_cast<size_t>(BracketOf(a.trial))].ScoreAt(
      a.trial, a.rung - BracketOf(a.trial));
  double score_b = brackets_[static_cast<size_t>(BracketOf(b.trial))].ScoreAt(
      b.trial, b.rung - BracketOf(b.trial));
  return score_a != score_b ? score_a > score_b : a.trial < b.trial;
}

std::vector<Brackets::Promotion> Brackets::Candidates(size_t limit) const {
  if (brackets_.size() == 1) return brackets_.front().Candidates(limit);
  std::vector<Promotion> all;
  for (size_t b = 0; b < brackets_.size(); ++b) {
    for (Promotion p : brackets_[b].Candidates(limit)) {
      p.rung += static_cast<int>(b);
      all.push_back(p);
    }
  }
  std::sort(all.begin(), all.end(),
            [this](const Promotion& a, const Promotion& b) { return Before(a, b); });
  if (all.size() > limit) all.resize(limit);
  return all;
}

std::optional<Brackets::Promotion> Brackets::Leader() const {
  std::optional<Promotion> leader;
  for (size_t b = 0; b < brackets_.size(); ++b) {
    std::optional<Promotion> p = brackets_[b].Leader();
    if (!p) continue;
    p->rung += static_cast<int>(b);
    if (!leader || Before(*p, *leader)) leader = p;
  }
  return leader;
}

void Brackets::MarkPromoted(int64_t trial, int rung) {
  int b = BracketOf(trial);
  if (rung >= b) brackets_[static_cast<size_t>(b)].MarkPromoted(trial, rung - b);
}

void Brackets::Withdraw(int64_t trial) {
  brackets_[static_cast<size_t>(BracketOf(trial))].Withdraw(trial);
}

int64_t Brackets::SumAt(int rung, int64_t (AshaScheduler::*tally)(int) const) const {
  int64_t n = 0;
  for (int b = 0; b <= rung && b < count(); ++b) {
    const AshaScheduler& bracket = brackets_[static_cast<size_t>(b)];
    if (rung - b < bracket.decision_rungs()) n += (bracket.*tally)(rung - b);
  }
  return n;
}

int64_t Brackets::recorded(int rung) const { return SumAt(rung, &AshaScheduler::recorded); }

int64_t Brackets::promoted(int rung) const { return SumAt(rung, &AshaScheduler::promoted); }

std::optional<AshaScheduler::Arrival> Brackets::ArrivalOf(int64_t trial, int rung) const {
  int b = BracketOf(trial);
  if (rung < b || rung >= decision_rungs_) return std::nullopt;
  return brackets_[static_cast<size_t>(b)].ArrivalOf(trial, rung - b);
}

}  // namespace bsw
