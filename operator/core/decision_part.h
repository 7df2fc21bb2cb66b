#ifndef BSW_CORE_DECISION_PART_H_
#define BSW_CORE_DECISION_PART_H_

// What the decisions ComputePlan is made of share. Each decision is a pure function of the
// observed state: it returns its own part of the plan, and where it admits work, the budget
// account after its admissions, which the next decision takes as its input. None reads what
// another one decided but through its arguments. Each pair of decisions has its header:
// verdict_decision.h, trial_decisions.h, deadline_decision.h, admission.h, probe_decisions.h,
// conditions.h, and pricing.h for what new work costs.

#include <string>
#include <vector>

#include "operator/core/ledger.h"
#include "operator/core/planner.h"
#include "operator/core/sweep_model.h"

namespace bsw::decisions {

// What every decision reads.
struct PlanInput {
  const SweepModel& model;
  const Observed& observed;
  double now = 0;
  const PlannerOptions& options;
  // The share of each running segment's reservation that the budget still holds
  // (ReservationFit): below 1 only after spec.budget.gpuHours was cut below used + reserved.
  double reservation_fit = 1;

  const SweepSpec& spec() const { return model.spec(); }
};

// One decision's share of a plan.
struct Part {
  std::vector<Event> events;
  std::vector<Action> actions;
  std::vector<Denial> denials;
  std::vector<std::string> unknown;  // Plan::unknown
  int occupied = 0;                  // slots its trials hold in this pass

  // Appends `other` after this part's own.
  void Add(Part other);
};

// A part that admitted work, and the budget account after its admissions.
struct Admitted {
  Part part;
  Ledger ledger;
};

// printf of one or two figures into a message.
std::string Figures(const char* fmt, double a, double b = 0);

}  // namespace bsw::decisions

#endif  // BSW_CORE_DECISION_PART_H_
