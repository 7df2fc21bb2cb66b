#include "operator/core/population.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "operator/core/param_axis.h"

namespace bsw {
namespace {

using nlohmann::json;

// Separates the exploit's random stream from the sampler's for the same (seed, trial).
constexpr uint64_t kPopulationStream = 0x5bd1e9955bd1e995ULL;
// PBT's explore: the chance of a fresh draw, and the factors of a move.
constexpr double kResampleProbability = 0.25;
constexpr double kPerturbFactors[] = {0.8, 1.2};

// A trial's value at a rung, ranked: higher is better whatever the goal; NaN lowest.
struct Ranked {
  double score = 0;
  int64_t trial = -1;
};

double Score(const SweepModel& model, double value) {
  double score = model.spec().goal == Goal::kMaximize ? value : -value;
  return std::isnan(score) ? -std::numeric_limits<double>::infinity() : score;
}

std::vector<Ranked> RankAt(const SweepModel& model, double resource) {
  std::vector<Ranked> ranked;
  for (int64_t i = 0; i < model.trial_count(); ++i) {
    const std::map<double, double>& values = model.trial(i).rung_values;
    auto v = values.find(resource);
    if (v != values.end()) ranked.push_back({Score(model, v->second), i});
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Ranked& a, const Ranked& b) { return a.score > b.score; });
  return ranked;
}

// Whether trial `t` left a checkpoint at `resource` that another trial may go on from.
bool CheckpointedAt(const Trial& t, double resource) {
  return std::any_of(t.segments.begin(), t.segments.end(), [&](const SegmentRecord& s) {
    return s.reached_until && s.until == resource;
  });
}

json Moved(const ParamSpec& p, const json& value, Random& random) {
  if (!value.is_number() || random.Uniform() < kResampleProbability) {
    return SampleParam(p, random);
  }
  double factor = kPerturbFactors[random.Next() % std::size(kPerturbFactors)];
  double x = std::clamp(value.get<double>() * factor, p.min, p.max);
  if (p.type == ParamType::kInt) return static_cast<int64_t>(std::llround(x));
  return x;
}

json Neighbour(const ParamSpec& p, const json& value, Random& random) {
  auto at = std::find(p.values.begin(), p.values.end(), value);
  if (at == p.values.end() || random.Uniform() < kResampleProbability) {
    return SampleParam(p, random);
  }
  auto index = static_cast<int64_t>(at - p.values.begin());
  int64_t last = static_cast<int64_t>(p.values.size()) - 1;
  index = std::clamp<int64_t>(index + (random.Next() % 2 == 0 ? -1 : 1), 0, last);
  return p.values[static_cast<size_t>(index)];
}

std::string Number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

// "lr 0.1 -> 0.0032, weight-decay 0.01 -> 0.012": what the step changed from `before`.
std::string Changes(const Config& before, const Config& after) {
  std::string out;
  for (const auto& [name, value] : after) {
    const json* old = FindParam(before, name);
    if (old != nullptr && *old == value) continue;
    out += (out.empty() ? "" : ", ") + name + " " + (old ? ParamValueText(*old) : "none") + " -> " +
           ParamValueText(value);
  }
  return out.empty() ? "no parameter changed" : out;
}

// NextStep's exploit, short of its explore: the donor, the quantile it was drawn from, and the
// random stream the explore goes on with.
struct ExploitChoice {
  int64_t donor = -1;
  int64_t quantile = 0;
  int64_t ranked = 0;
  Random random;
};

std::optional<ExploitChoice> ChooseExploit(const SweepModel& model, const Trial& t) {
  double resource = t.progress();
  // Exploited here already, and not launched since (a pass that ended between the two): the
  // exploit stands, and the trial goes on with what it brought.
  if (!t.lineage.empty() && t.lineage.back().resource == resource) return std::nullopt;
  std::vector<Ranked> ranked = RankAt(model, resource);
  auto n = static_cast<int64_t>(ranked.size());
  auto quantile =
      std::min<int64_t>(static_cast<int64_t>(std::ceil(n * kPopulationQuantile)), n / 2);
  auto position = std::find_if(ranked.begin(), ranked.end(),
                               [&](const Ranked& r) { return r.trial == t.index; }) -
                  ranked.begin();
  if (quantile == 0 || position < n - quantile) return std::nullopt;
  std::vector<int64_t> donors;
  for (int64_t i = 0; i < quantile; ++i) {
    const Trial& top = model.trial(ranked[static_cast<size_t>(i)].trial);
    if (top.index != t.index && CheckpointedAt(top, resource)) donors.push_back(top.index);
  }
  if (donors.empty()) return std::nullopt;
  int rung = model.rungs().IndexOf(resource);
  Random random(
      MixSeed(MixSeed(model.spec().seed ^ kPopulationStream, static_cast<uint64_t>(t.index)),
              static_cast<uint64_t>(rung)));
  int64_t donor = donors[random.Next() % donors.size()];
  return ExploitChoice{donor, quantile, n, random};
}

}  // namespace

std::vector<const Trial*> CarryOrder(const SweepModel& model) {
  std::vector<const Trial*> order;
  for (int64_t i = 0; i < model.trial_count(); ++i) {
    const Trial& t = model.trial(i);
    bool live = t.phase == TrialPhase::kRunning || t.phase == TrialPhase::kPaused;
    if (live && t.progress() < model.rungs().max()) order.push_back(&t);
  }
  auto score = [&](const Trial* t) {
    return t->rung_values.empty() ? -std::numeric_limits<double>::infinity()
                                  : Score(model, t->rung_values.rbegin()->second);
  };
  std::stable_sort(order.begin(), order.end(), [&](const Trial* a, const Trial* b) {
    if (a->progress() != b->progress()) return a->progress() > b->progress();
    return score(a) > score(b);
  });
  return order;
}

Config Perturb(const SweepSpec& spec, const Config& params, Random& random) {
  Config out = params;
  for (auto& [name, value] : out) {
    for (const ParamSpec& p : spec.search_space) {
      if (p.name != name || !p.mutable_) continue;
      value = p.type == ParamType::kChoice ? Neighbour(p, value, random) : Moved(p, value, random);
    }
  }
  return out;
}

std::optional<int64_t> ExploitDonor(const SweepModel& model, const Trial& t) {
  std::optional<ExploitChoice> exploit = ChooseExploit(model, t);
  return exploit ? std::optional<int64_t>(exploit->donor) : std::nullopt;
}

Event NextStep(const SweepModel& model, const Trial& t, double now) {
  double resource = t.progress();
  int rung = model.rungs().IndexOf(resource);
  std::optional<ExploitChoice> exploit = ChooseExploit(model, t);
  if (!exploit) return event::TrialPromoted{.at = now, .trial = t.index, .rung = rung};
  const Trial& donor = model.trial(exploit->donor);
  event::TrialExploited e{.at = now, .trial = t.index, .rung = rung, .donor = donor.index};
  e.params = model.spec().algorithm == Algorithm::kPb2
                 ? Pb2Explore(model, donor.params, rung, exploit->random)
                 : Perturb(model.spec(), donor.params, exploit->random);
  e.message = "in the bottom " + std::to_string(exploit->quantile) + " of " +
              std::to_string(exploit->ranked) + " at " + model.spec().resource_unit + " " +
              Number(resource) + " (value " + Number(t.rung_values.at(resource)) +
              "): goes on from " + donor.name + " (value " +
              Number(donor.rung_values.at(resource)) + "); " + Changes(t.params, e.params);
  return e;
}

}  // namespace bsw
