#ifndef BSW_TESTS_UNIT_CORE_EVENT_SAMPLES_H_
#define BSW_TESTS_UNIT_CORE_EVENT_SAMPLES_H_

#include <vector>

#include "operator/core/event.h"

namespace bsw::testing {

// One event of each kind, in the order of Event's alternatives, with every field set to a value
// of its own and every optional field present: what the event codec and every EventLog must
// carry through unchanged.
inline std::vector<Event> OneEventOfEachKind() {
  return {
      event::TrialCreated{.at = 100.5, .trial = 0, .params = {{"lr", 0.003}, {"opt", "adamw"}}},
      event::SegmentLaunched{
          .at = 101, .trial = 0, .segment = 1, .from = 3, .until = 9, .deadline = 160.25},
      event::ValueRecorded{
          .at = 102, .trial = 0, .resource = 3, .value = 0.75, .seconds = 41.5, .units = 2},
      event::DeadlineMoved{.at = 103, .trial = 0, .segment = 1, .deadline = 170.5},
      event::TrialStopped{
          .at = 104, .trial = 0, .reason = "RungCutoff", .message = "not in the top 1/3"},
      event::TrialPromoted{.at = 105, .trial = 1, .rung = 2, .message = "the last at its rung"},
      event::SegmentEnded{.at = 106,
                          .trial = 1,
                          .segment = 2,
                          .reason = "Error",
                          .message = "exit code 3",
                          .output = "step 40 loss nan\n",
                          .started = 90.25,
                          .finished = 105.75,
                          .devices = 2},
      event::SweepFinished{.at = 107,
                           .phase = SweepPhase::kBudgetExhausted,
                           .reason = "BudgetExhausted",
                           .message = "the budget is spent"},
      event::ProbeLaunched{.at = 108, .probe = 2, .params = {{"workers", 4}}, .deadline = 200},
      event::ProbeMeasured{.at = 109,
                           .probe = 2,
                           .figures = {.samples_per_second = 812.5,
                                       .data_wait_ratio = 0.125,
                                       .accelerator_utilization = 0.91}},
      event::ProbeEnded{.at = 110,
                        .probe = 2,
                        .reason = "Error",
                        .message = "exit code 1",
                        .output = "out of memory\n",
                        .seconds = 33.5},
      event::ThroughputDecided{.at = 111,
                               .probe = 1,
                               .reason = "TargetMet",
                               .message = "workers 2 keeps the accelerator busy",
                               .params = {{"workers", 2}}},
      event::RungVerdict{.at = 112,
                         .trial = 3,
                         .rung = 1,
                         .resource = 3,
                         .verdict = Verdict::kStop,
                         .message = "value 0.2 is not in the top 1/3"},
      event::TrialExploited{.at = 113,
                            .trial = 4,
                            .rung = 1,
                            .donor = 2,
                            .params = {{"lr", 0.0036}},
                            .message = "from trial 2, lr 0.003 -> 0.0036"},
  };
}

}  // namespace bsw::testing

#endif  // BSW_TESTS_UNIT_CORE_EVENT_SAMPLES_H_
