#ifndef BSW_CORE_POPULATION_H_
#define BSW_CORE_POPULATION_H_

// Population Based Training (Jaderberg et al., 2017, "Population Based Training of Neural
// Networks") and PB2 (Parker-Holder et al., 2020, "Provably Efficient Online Hyperparameter
// Optimization with Population-Based Bandits") over pause mode. A population of spec.maxTrials
// trials trains in intervals of spec.scheduler.perturbationInterval units (the sweep's rungs);
// whenever a paused trial goes on, the values recorded at its rung decide how: from the bottom
// quantile it goes on from a top trial's checkpoint there (exploit) with that trial's parameters,
// its mutable ones changed (explore: perturbed for pbt, chosen by a GP bandit for pb2); otherwise
// it goes on as it was.

#include <cstdint>
#include <optional>
#include <vector>

#include "operator/core/event.h"
#include "operator/core/random.h"
#include "operator/core/search_space.h"
#include "operator/core/sweep_model.h"

namespace bsw {

// The share of the values at a rung that counts as its top, and as its bottom.
inline constexpr double kPopulationQuantile = 0.25;

// The running and paused trials short of the full resource in the order the budget carries them
// there when it cannot carry all: the most advanced first, the best value at their rung first among
// equals (a NaN last), then the lowest index.
std::vector<const Trial*> CarryOrder(const SweepModel& model);

// How paused trial `t` goes on from the rung it paused at: TrialExploited when it is in the
// bottom quantile there and a top trial's checkpoint at that rung exists, else TrialPromoted
// (also when it was exploited there already: a step is never decided twice). Deterministic: the
// same model and seed give the same step.
Event NextStep(const SweepModel& model, const Trial& t, double now);

// The trial that paused trial `t` would go on from if NextStep exploits it (its donor, whose
// parameters price the next segment), without the explore step that NextStep then takes.
std::optional<int64_t> ExploitDonor(const SweepModel& model, const Trial& t);

// PBT's explore: `params` with each mutable parameter resampled from its range (probability
// 1/4) or moved: a real or int value times 0.8 or 1.2 within its bounds, a choice to a
// neighbouring value.
Config Perturb(const SweepSpec& spec, const Config& params, Random& random);

// PB2's explore: `params` with the mutable parameters chosen by a time-varying Gaussian-process
// bandit: a GP fitted to how much every trial's objective moved over each interval with the
// values it trained with (recent intervals weigh most), maximized by upper confidence bound for
// the interval after `rung`. Perturb until two intervals are measured. Mutable parameters are
// numeric (ParseSweep refuses a mutable choice under pb2).
Config Pb2Explore(const SweepModel& model, const Config& params, int rung, Random& random);

}  // namespace bsw

#endif  // BSW_CORE_POPULATION_H_
