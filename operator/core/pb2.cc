// PB2's explore step (population.h): a time-varying GP bandit over the mutable parameters.
// Fixed hyperparameters instead of the paper's marginal-likelihood fit keep it small and
// deterministic; the inputs are the unit cube of the mutable parameters, the outputs standardized.

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "operator/core/param_axis.h"
#include "operator/core/population.h"

namespace bsw {
namespace {

using nlohmann::json;

constexpr double kLengthScale = 0.3;  // of the squared-exponential kernel, in the unit cube
// ε of the time-varying kernel (Bogunovic et al., 2016): intervals t apart correlate by
// (1 - ε)^(|t| / 2), so older changes count less.
constexpr double kForgetting = 0.1;
constexpr double kNoise = 0.05;       // observation noise, on the standardized scale
constexpr double kExploration = 2.0;  // UCB = mean + κ · standard deviation
constexpr size_t kMaxObservations = 200;
constexpr int kCandidates = 256;

// One interval of one trial: where its mutable parameters stood, when, and how much its
// objective gained (higher is better, whatever the goal).
struct Observation {
  int rung = 0;  // the interval ends at this rung
  std::vector<double> x;
  double gain = 0;
};

std::vector<const ParamSpec*> MutableParams(const SweepSpec& spec) {
  std::vector<const ParamSpec*> out;
  for (const ParamSpec& p : spec.search_space) {
    if (p.mutable_ && p.type != ParamType::kChoice && p.type != ParamType::kGrid) out.push_back(&p);
  }
  return out;
}

// The unit-cube point of `params`; nullopt when a mutable value is missing or out of range.
std::optional<std::vector<double>> PointOf(const std::vector<const ParamSpec*>& space,
                                           const Config& params) {
  std::vector<double> x;
  for (const ParamSpec* p : space) {
    const Axis axis(*p);
    const json* v = FindParam(params, p->name);
    std::optional<double> position = v ? axis.Position(*p, *v) : std::nullopt;
    if (!position) return std::nullopt;
    x.push_back((*position - axis.low) / (axis.high - axis.low));
  }
  return x;
}

// The parameters trial `t` trained with over the interval that ended at `resource`: those of its
// last exploit below it, else those it was created with.
const Config& ParamsBefore(const Trial& t, double resource) {
  const Config* params = t.lineage.empty() ? &t.params : &t.lineage.front().previous;
  for (size_t i = 0; i < t.lineage.size() && t.lineage[i].resource < resource; ++i) {
    params = i + 1 < t.lineage.size() ? &t.lineage[i + 1].previous : &t.params;
  }
  return *params;
}

std::vector<Observation> Observations(const SweepModel& model,
                                      const std::vector<const ParamSpec*>& space) {
  const Rungs& rungs = model.rungs();
  double sign = model.spec().goal == Goal::kMaximize ? 1 : -1;
  std::vector<Observation> out;
  for (int64_t i = 0; i < model.trial_count(); ++i) {
    const Trial& t = model.trial(i);
    for (int j = 1; j < rungs.size(); ++j) {
      auto end = t.rung_values.find(rungs.at(j));
      if (end == t.rung_values.end()) continue;
      // After an exploit at the interval's start, the trial started from the donor's value.
      const Trial* base = &t;
      for (const Exploit& e : t.lineage) {
        if (e.resource == rungs.at(j - 1)) base = &model.trial(e.donor);
      }
      auto start = base->rung_values.find(rungs.at(j - 1));
      if (start == base->rung_values.end()) continue;
      double gain = sign * (end->second - start->second);
      std::optional<std::vector<double>> x = PointOf(space, ParamsBefore(t, rungs.at(j)));
      if (!x || !std::isfinite(gain)) continue;
      out.push_back({j, std::move(*x), gain});
    }
  }
  // The most recent intervals, which the kernel weighs most.
  std::stable_sort(out.begin(), out.end(),
                   [](const Observation& a, const Observation& b) { return a.rung > b.rung; });
  if (out.size() > kMaxObservations) out.resize(kMaxObservations);
  return out;
}

double Kernel(const std::vector<double>& a, int ta, const std::vector<double>& b, int tb) {
  double distance = 0;
  for (size_t d = 0; d < a.size(); ++d) distance += (a[d] - b[d]) * (a[d] - b[d]);
  return std::exp(-distance / (2 * kLengthScale * kLengthScale)) *
         std::pow(1 - kForgetting, std::abs(ta - tb) / 2.0);
}

// The Gaussian-process posterior of the observations' gains.
class Posterior {
 public:
  explicit Posterior(std::vector<Observation> data) : data_(std::move(data)) {
    size_t n = data_.size();
    double mean = 0;
    for (const Observation& o : data_) mean += o.gain;
    mean /= static_cast<double>(n);
    double spread = 0;
    for (const Observation& o : data_) spread += (o.gain - mean) * (o.gain - mean);
    spread = std::sqrt(spread / static_cast<double>(n));
    if (!(spread > 0)) spread = 1;
    // Cholesky factor of K + noise·I, then alpha = (K + noise·I)^-1 y.
    chol_.assign(n * n, 0);
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j <= i; ++j) {
        double sum =
            Kernel(data_[i].x, data_[i].rung, data_[j].x, data_[j].rung) + (i == j ? kNoise : 0);
        for (size_t k = 0; k < j; ++k) sum -= chol_[i * n + k] * chol_[j * n + k];
        chol_[i * n + j] = i == j ? std::sqrt(std::max(sum, 1e-12)) : sum / chol_[j * n + j];
      }
    }
    std::vector<double> y(n);
    for (size_t i = 0; i < n; ++i) y[i] = (data_[i].gain - mean) / spread;
    alpha_ = SolveUpper(SolveLower(y));
  }

  // Mean plus κ standard deviations at `x` for the interval ending at `rung`.
  double UpperBound(const std::vector<double>& x, int rung) const {
    std::vector<double> k(data_.size());
    for (size_t i = 0; i < data_.size(); ++i) k[i] = Kernel(x, rung, data_[i].x, data_[i].rung);
    double mean = 0;
    for (size_t i = 0; i < k.size(); ++i) mean += k[i] * alpha_[i];
    std::vector<double> v = SolveLower(k);
    double variance = 1;
    for (double vi : v) variance -= vi * vi;
    return mean + kExploration * std::sqrt(std::max(variance, 0.0));
  }

 private:
  std::vector<double> SolveLower(std::vector<double> b) const {
    size_t n = data_.size();
    for (size_t i = 0; i < n; ++i) {
      for (size_t k = 0; k < i; ++k) b[i] -= chol_[i * n + k] * b[k];
      b[i] /= chol_[i * n + i];
    }
    return b;
  }
  std::vector<double> SolveUpper(std::vector<double> b) const {
    size_t n = data_.size();
    for (size_t i = n; i-- > 0;) {
      for (size_t k = i + 1; k < n; ++k) b[i] -= chol_[k * n + i] * b[k];
      b[i] /= chol_[i * n + i];
    }
    return b;
  }

  std::vector<Observation> data_;
  std::vector<double> chol_;  // lower triangle, row-major
  std::vector<double> alpha_;
};

}  // namespace

Config Pb2Explore(const SweepModel& model, const Config& params, int rung, Random& random) {
  std::vector<const ParamSpec*> space = MutableParams(model.spec());
  std::vector<Observation> data = Observations(model, space);
  std::optional<std::vector<double>> own = PointOf(space, params);
  if (data.size() < 2 || !own) return Perturb(model.spec(), params, random);
  const Posterior posterior(std::move(data));
  int next = rung + 1;
  std::optional<std::vector<double>> best;  // none: the donor's own values are best
  double best_bound = posterior.UpperBound(*own, next);
  for (int c = 0; c < kCandidates; ++c) {
    std::vector<double> x(space.size());
    for (double& xd : x) xd = random.Uniform();
    double bound = posterior.UpperBound(x, next);
    if (bound > best_bound) {
      best = std::move(x);
      best_bound = bound;
    }
  }
  Config out = params;
  if (!best) return out;
  for (size_t d = 0; d < space.size(); ++d) {
    const Axis axis(*space[d]);
    for (auto& [name, value] : out) {
      if (name == space[d]->name) {
        value = axis.ValueAt(*space[d], axis.low + (*best)[d] * (axis.high - axis.low));
      }
    }
  }
  return out;
}

}  // namespace bsw
