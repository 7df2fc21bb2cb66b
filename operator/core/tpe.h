#ifndef BSW_CORE_TPE_H_
#define BSW_CORE_TPE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "operator/core/api.h"
#include "operator/core/search_space.h"
#include "operator/core/sweep_model.h"

namespace bsw {

// The `tpe` sampler: a Tree-structured Parzen Estimator (Bergstra et al., 2011, "Algorithms for
// Hyper-Parameter Optimization"). It ranks the observations, splits them into the best
// kTpeGoodFraction of the values that are not NaN (good) and the rest (bad), and fits to each
// group, per parameter, a Parzen estimator: l(x) to the good, g(x) to the bad. It draws
// kTpeCandidates values from l and keeps the one with the greatest l(x)/g(x). Parameters are
// modelled independently, as in the paper.
//
// Numeric parameters use a mixture of Gaussians truncated to the parameter's interval, one per
// observation plus a prior over the whole interval; logUniform and log-scaled ints on a log axis,
// ints as the cell [v, v + 1) that the random sampler floors to v. Choice parameters use the
// observations' counts per value plus a prior of one observation spread evenly. Grid parameters
// are not modelled: they take every value in turn, as with the random sampler.

// One trial as TPE sees it: its parameters and its objective at the modelled rung. NaN ranks below
// every number.
struct TpeObservation {
  const Config* params = nullptr;
  double value = 0;
};

inline constexpr double kTpeGoodFraction = 0.25;
inline constexpr int kTpeCandidates = 24;

// The number of values a rung needs before TPE models it: max(parameters + 2, 6).
int64_t TpeMinValues(size_t parameter_count);

// Proposes configuration `index` from `observations`. `base` is the random sampler's configuration
// `index` (SearchSpace::ConfigAt), whose grid parameters are kept. Observed values that a parameter
// of `space` cannot take (a spec changed mid-sweep) are left out of that parameter's estimators.
// Same inputs, same proposal. REQUIRES: observations.size() >= 2; `base` lists the parameters of
// `space` in order.
Config ProposeTpe(const std::vector<ParamSpec>& space, const Config& base,
                  const std::vector<TpeObservation>& observations, Goal goal, uint64_t seed,
                  int64_t index);

// What TPE learns from in `model`: every value recorded at the highest rung that holds at least
// TpeMinValues of them (as BOHB does), plus, as NaN, every trial that ended without a value there:
// stopped at a lower rung, diverged or failed. Those rank below every value, so that under early
// stopping the bad group holds what the rungs below cut, not only the worse of the survivors.
// Empty while no rung has that many values.
std::vector<TpeObservation> TpeObservations(const SweepModel& model);

// The configuration of new trial `index`: the search space's, or with `sampler: tpe` TPE's
// proposal once TpeObservations has some.
Config NewTrialConfig(const SweepModel& model, int64_t index);

}  // namespace bsw

#endif  // BSW_CORE_TPE_H_
