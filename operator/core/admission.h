#ifndef BSW_CORE_ADMISSION_H_
#define BSW_CORE_ADMISSION_H_

// Admission and the sweep's end (admission.cc).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "operator/core/decision_part.h"
#include "operator/core/reason.h"

namespace bsw::decisions {

// Admits and launches segment `segment` of trial `index` from `from` to `until`; or, when the
// budget says no, a part with only the denial. `priced_by` is the trial whose measurements price
// it, when not its own: the donor of an exploit decided in the same pass.
Admitted Launch(const PlanInput& in, const Ledger& ledger, int64_t index, int segment, double from,
                double until, int free_slots, std::optional<int64_t> priced_by = std::nullopt);

// Pause mode under a budget would otherwise spend it all on trials that stop at a rung and end
// with none at the full resource. So until a trial runs there, the sweep keeps what taking its
// leader (Brackets::Leader) there costs. None without a leader, without a measurement to
// price it, or when the budget left cannot cover it anyway.
struct FinishReserve {
  int64_t trial = -1;
  int rung = 0;
  double device_seconds = 0;
};
std::optional<FinishReserve> FinishReserveOf(const PlanInput& in, const Ledger& ledger);
// Why no trial reached the full resource, for the message of a sweep that ends so: every trial
// stopped or failed first, or taking the leader there costs more than is left; nullopt once a
// trial completed.
std::optional<std::string> NoneAtMax(const PlanInput& in, const Ledger& ledger);

// Whether a new configuration may be created as trial `next` (maxTrials, the end of a grid).
bool CanCreate(const SweepModel& model, int64_t next);

// Fills the slots the trials left free (`occupied` of spec.parallelism taken): pause mode's
// promotions first, keeping the finish reserve, then new trials while no admission was denied in
// this pass (`denied`). In pause mode, when then nothing runs and nothing is left to create (or an
// admission was denied), the leader the reserve was kept for is taken to the full resource, so
// that the sweep does not end with no trial there.
Admitted FillSlots(const PlanInput& in, const Ledger& ledger, int occupied, bool denied);

struct Finish {
  SweepPhase phase = SweepPhase::kCompleted;
  Reason reason = Reason::kSweepCompleted;
  std::string message;

  event::SweepFinished ToEvent(double now) const;
};
// Whether a sweep with `occupied` slots taken and `denials` in this pass is over: nothing runs,
// and the budget refused (BudgetExhausted) or nothing is left to run (Completed). Denials that
// wait (a pool's fair share) do not end it.
std::optional<Finish> FinishOf(const SweepModel& model, int occupied,
                               const std::vector<Denial>& denials);
// What a `completed` finish (FinishOf) is once the trials are counted as the pass leaves them
// (`after`: its model with the pass's events applied): none yet while the leader the finish
// reserve is kept for is paused (the next pass takes it to the full resource, FillSlots); Failed
// (AllTrialsFailed) when every trial failed; else `completed`, saying why no trial reached the
// full resource when none did (NoneAtMax).
std::optional<Finish> Completion(const PlanInput& after, const Ledger& ledger, Finish completed);
// Failed when spec.maxFailedTrials trials failed.
std::optional<Finish> TooManyFailures(const SweepModel& model);

}  // namespace bsw::decisions

#endif  // BSW_CORE_ADMISSION_H_
