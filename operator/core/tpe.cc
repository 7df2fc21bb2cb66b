#include "operator/core/tpe.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <string>

#include "operator/core/param_axis.h"
#include "operator/core/random.h"

namespace bsw {
namespace {

using nlohmann::json;

// Separates TPE's random stream from the random sampler's for the same (seed, index).
constexpr uint64_t kTpeStream = 0x7e5a3b1d9c4f2e67ULL;
// Draws before a truncated Gaussian gives up and clamps: the mass inside is at least about a
// third for every component, so this is never reached in practice.
constexpr int kMaxDraws = 64;

double NormalCdf(double z) { return 0.5 * std::erfc(-z / std::numbers::sqrt2); }

// A standard normal deviate (Box-Muller), from the portable generator.
double StandardNormal(Random& rng) {
  double radius = std::sqrt(-2 * std::log(1 - rng.Uniform()));
  return radius * std::cos(2 * std::numbers::pi * rng.Uniform());
}

// A mixture of equally weighted Gaussians truncated to [low, high]: a prior centred on the
// interval, spread over its width, and one per point, spread by the greater distance to its
// neighbours among the points and the prior's centre (the paper's rule), clipped to
// [width / min(100, n + 1), width].
class Parzen {
 public:
  Parzen(const std::vector<double>& points, double low, double high) : low_(low), high_(high) {
    const double width = high - low;
    const double narrowest = width / std::min(100.0, static_cast<double>(points.size() + 1));
    // Every centre, with whether it is the prior's.
    std::vector<std::pair<double, bool>> centres = {{low + width / 2, true}};
    for (double x : points) centres.emplace_back(x, false);
    std::sort(centres.begin(), centres.end());
    for (size_t i = 0; i < centres.size(); ++i) {
      const auto [mean, prior] = centres[i];
      double spread = 0;
      if (i > 0) spread = mean - centres[i - 1].first;
      if (i + 1 < centres.size()) spread = std::max(spread, centres[i + 1].first - mean);
      Add(mean, prior ? width : std::clamp(spread, narrowest, width));
    }
  }

  double LogDensity(double x) const {
    double density = 0;
    for (const Component& c : components_) {
      double z = (x - c.mean) / c.spread;
      density += std::exp(-0.5 * z * z) / (c.spread * c.mass);
    }
    return std::log(density /
                    (static_cast<double>(components_.size()) * std::sqrt(2 * std::numbers::pi)));
  }

  double Sample(Random& rng) const {
    const Component& c = components_[static_cast<size_t>(
        std::min(rng.Uniform() * static_cast<double>(components_.size()),
                 static_cast<double>(components_.size() - 1)))];
    double x = c.mean;
    for (int draw = 0; draw < kMaxDraws; ++draw) {
      x = c.mean + c.spread * StandardNormal(rng);
      if (x >= low_ && x < high_) return x;
    }
    return std::clamp(x, low_, high_);
  }

 private:
  struct Component {
    double mean;
    double spread;
    double mass;  // of the untruncated Gaussian inside [low, high]
  };

  void Add(double mean, double spread) {
    double mass = NormalCdf((high_ - mean) / spread) - NormalCdf((low_ - mean) / spread);
    components_.push_back({mean, spread, mass});
  }

  double low_;
  double high_;
  std::vector<Component> components_;
};

// Per value of a choice parameter: the share of the observations that took it, with a prior of
// one observation spread evenly over the values.
std::vector<double> CategoryWeights(const std::vector<size_t>& picks, size_t categories) {
  const double n = static_cast<double>(categories);
  std::vector<double> weights(categories, 1 / n);
  for (size_t pick : picks) weights[pick] += 1;
  for (double& w : weights) w /= static_cast<double>(picks.size()) + 1;
  return weights;
}

json ProposeNumeric(const ParamSpec& p, const std::vector<const Config*>& good,
                    const std::vector<const Config*>& bad, Random& rng) {
  const Axis axis(p);
  auto positions = [&](const std::vector<const Config*>& group) {
    std::vector<double> out;
    for (const Config* params : group) {
      const json* v = FindParam(*params, p.name);
      if (std::optional<double> x = v ? axis.Position(p, *v) : std::nullopt) out.push_back(*x);
    }
    return out;
  };
  const Parzen l(positions(good), axis.low, axis.high);
  const Parzen g(positions(bad), axis.low, axis.high);
  double best = 0;
  double best_score = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < kTpeCandidates; ++i) {
    double x = l.Sample(rng);
    double score = l.LogDensity(x) - g.LogDensity(x);
    if (score > best_score) {
      best = x;
      best_score = score;
    }
  }
  return axis.ValueAt(p, best);
}

json ProposeChoice(const ParamSpec& p, const std::vector<const Config*>& good,
                   const std::vector<const Config*>& bad, Random& rng) {
  auto picks = [&](const std::vector<const Config*>& group) {
    std::vector<size_t> out;
    for (const Config* params : group) {
      const json* v = FindParam(*params, p.name);
      if (v == nullptr) continue;
      auto it = std::find(p.values.begin(), p.values.end(), *v);
      if (it != p.values.end()) out.push_back(static_cast<size_t>(it - p.values.begin()));
    }
    return out;
  };
  const std::vector<double> l = CategoryWeights(picks(good), p.values.size());
  const std::vector<double> g = CategoryWeights(picks(bad), p.values.size());
  size_t best = 0;
  double best_score = -std::numeric_limits<double>::infinity();
  for (int i = 0; i < kTpeCandidates; ++i) {
    double u = rng.Uniform();
    size_t k = 0;
    while (k + 1 < l.size() && u >= l[k]) u -= l[k++];
    double score = std::log(l[k]) - std::log(g[k]);
    if (score > best_score) {
      best = k;
      best_score = score;
    }
  }
  return p.values[best];
}

// Whether `t` ended for good: stopped (by a rung, a divergence, a timeout) or failed.
bool Ended(const Trial& t) {
  return t.phase == TrialPhase::kStopped || t.phase == TrialPhase::kFailed;
}

}  // namespace

int64_t TpeMinValues(size_t parameter_count) {
  return std::max<int64_t>(static_cast<int64_t>(parameter_count) + 2, 6);
}

Config ProposeTpe(const std::vector<ParamSpec>& space, const Config& base,
                  const std::vector<TpeObservation>& observations, Goal goal, uint64_t seed,
                  int64_t index) {
  // Best first, whatever the goal; ties keep the observations' order.
  auto score = [&](double v) {
    if (std::isnan(v)) return -std::numeric_limits<double>::infinity();
    return goal == Goal::kMaximize ? v : -v;
  };
  std::vector<size_t> order(observations.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return score(observations[a].value) > score(observations[b].value);
  });
  const auto finite = static_cast<double>(
      std::count_if(observations.begin(), observations.end(),
                    [](const TpeObservation& o) { return !std::isnan(o.value); }));
  const auto good_count = static_cast<size_t>(std::clamp(
      std::ceil(kTpeGoodFraction * finite), 1.0, static_cast<double>(observations.size() - 1)));
  std::vector<const Config*> good, bad;
  for (size_t i = 0; i < order.size(); ++i) {
    (i < good_count ? good : bad).push_back(observations[order[i]].params);
  }

  Random rng(MixSeed(seed ^ kTpeStream, static_cast<uint64_t>(index)));
  Config config = base;
  for (size_t i = 0; i < space.size(); ++i) {
    const ParamSpec& p = space[i];
    if (p.type == ParamType::kGrid) continue;
    config[i].second = p.type == ParamType::kChoice ? ProposeChoice(p, good, bad, rng)
                                                    : ProposeNumeric(p, good, bad, rng);
  }
  return config;
}

std::vector<TpeObservation> TpeObservations(const SweepModel& model) {
  const int64_t needed = TpeMinValues(model.spec().search_space.size());
  const std::vector<double>& milestones = model.rungs().milestones();
  for (auto rung = milestones.rbegin(); rung != milestones.rend(); ++rung) {
    std::vector<TpeObservation> observations;
    int64_t values = 0;
    for (int64_t i = 0; i < model.trial_count(); ++i) {
      const Trial& t = model.trial(i);
      auto v = t.rung_values.find(*rung);
      if (v != t.rung_values.end()) {
        observations.push_back({&t.params, v->second});
        ++values;
      } else if (Ended(t)) {
        observations.push_back({&t.params, std::nan("")});
      }
    }
    if (values >= needed) return observations;
  }
  return {};
}

Config NewTrialConfig(const SweepModel& model, int64_t index) {
  Config base = model.search_space().ConfigAt(index);
  if (model.spec().sampler != Sampler::kTpe) return base;
  std::vector<TpeObservation> observations = TpeObservations(model);
  if (observations.empty()) return base;
  return ProposeTpe(model.spec().search_space, base, observations, model.spec().goal,
                    model.spec().seed, index);
}

}  // namespace bsw
