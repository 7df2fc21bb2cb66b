#include "operator/controller/cutoff_rung.h"

#include <gtest/gtest.h>

#include "operator/core/api.h"
#include "operator/core/reason.h"
#include "tests/unit/core/sweep_fixture.h"

namespace bsw {
namespace {

// A sweep with rungs at 1, 3, 9 and 27 epochs; trial 0 has reached `resource`, the rung values
// below it recorded.
SweepModel ModelAt(double resource) {
  SweepModel model(ParseSweep(testing::ValidSweepJson()).value());
  auto apply = [&model](const Event& e) { EXPECT_TRUE(model.Apply(e).ok()); };
  apply(event::TrialCreated{.at = 1, .trial = 0, .params = {{"lr", 0.01}}});
  apply(event::SegmentLaunched{.at = 2, .trial = 0, .until = 27, .deadline = 500});
  for (double rung : {1.0, 3.0, 9.0, 27.0}) {
    if (rung <= resource) {
      apply(event::ValueRecorded{.at = 3, .trial = 0, .resource = rung, .value = 0.5});
    }
  }
  return model;
}

TEST(CutoffRungTest, ARungCutoffIsCountedAtTheRungTheTrialReached) {
  struct Row {
    const char* name;
    double reached;
    int rung;
  };
  const Row rows[] = {
      {"first rung", 1, 0},
      {"second rung", 3, 1},
      {"third rung", 9, 2},
  };
  for (const Row& row : rows) {
    SweepModel model = ModelAt(row.reached);
    Event cut = event::TrialStopped{.at = 4, .trial = 0, .reason = ReasonName(Reason::kRungCutoff)};
    ASSERT_TRUE(model.Apply(cut).ok()) << row.name;
    EXPECT_EQ(CutoffRung(model, cut), row.rung) << row.name;
  }
}

TEST(CutoffRungTest, OtherStopsAndOtherEventsAreNoKill) {
  SweepModel model = ModelAt(3);
  EXPECT_EQ(CutoffRung(model,
                       event::TrialStopped{
                           .at = 4, .trial = 0, .reason = ReasonName(Reason::kBudgetExhausted)}),
            std::nullopt);
  EXPECT_EQ(CutoffRung(model, event::TrialPromoted{.at = 4, .trial = 0, .rung = 1}), std::nullopt);
}

}  // namespace
}  // namespace bsw
