// Pooled admission: the cap a BudgetPool puts on one sweep (CapOf) as a table, the denials it
// makes, the pool file's validation, and a property test that sweeps sharing a pool never hold
// more than it under any interleaving of passes, segment ends, runner crashes and resumes.
#include "operator/core/pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "operator/core/admission.h"
#include "operator/core/api.h"
#include "operator/core/trial_decisions.h"
#include "tests/unit/core/simulated_sweep.h"

namespace bsw {
namespace {

using ::testing::HasSubstr;

constexpr double kHour = 3600;

PoolAccount Account(double used_hours, double reserved_hours, bool active = true,
                    bool starved = false) {
  return PoolAccount{"s", used_hours * kHour, reserved_hours * kHour, active, starved};
}

struct CapRow {
  std::string name;
  PoolSpec pool;
  PoolAccounts accounts;  // "me" is the sweep asking
  double held_hours;      // what "me" holds now
  double want_cap_hours;
  Reason want_limit;
  bool want_waits;
};

void PrintTo(const CapRow& row, std::ostream* os) { *os << row.name; }

class CapOfTable : public ::testing::TestWithParam<CapRow> {};

TEST_P(CapOfTable, IsWhatTheSweepHoldsPlusTheLeastOfItsLimits) {
  const CapRow& row = GetParam();
  PoolCap cap = CapOf(row.pool, row.accounts, "me", row.held_hours * kHour);
  EXPECT_NEAR(cap.cap_device_seconds / kHour, row.want_cap_hours, 1e-9);
  EXPECT_EQ(cap.limit, row.want_limit);
  EXPECT_EQ(cap.waits, row.want_waits);
}

const PoolSpec kTen{"team", 10, std::nullopt};
const PoolSpec kTenAtMostFourEach{"team", 10, 4};

INSTANTIATE_TEST_SUITE_P(
    Rows, CapOfTable,
    ::testing::Values(
        CapRow{"ALoneSweepMayTakeTheWholePool", kTen, {}, 0, 10, Reason::kPoolExhausted, false},
        CapRow{"WhatOthersHoldIsNotOfferedAndTheirReservationsAreWaitedFor",
               kTen,
               {{"a", Account(3, 1, false)}},
               0,
               6,
               Reason::kPoolExhausted,
               true},
        CapRow{"WhatFinishedSweepsUsedNeverComesBack",
               kTen,
               {{"a", Account(4, 0, false)}},
               0,
               6,
               Reason::kPoolExhausted,
               false},
        CapRow{"ItsOwnHoldingReplacesItsAccount",
               kTen,
               {{"me", Account(9, 0)}},
               2,
               10,
               Reason::kPoolExhausted,
               false},
        CapRow{"TwoActiveSweepsAreEachEntitledToHalf",
               kTen,
               {{"a", Account(2, 2)}},
               0,
               5,
               Reason::kPoolFairShare,
               true},
        CapRow{"WhatItHoldsCountsAgainstItsPart",
               kTen,
               {{"a", Account(1, 1)}},
               2,
               5,
               Reason::kPoolFairShare,
               true},
        CapRow{"FourActiveSweepsEachGetAQuarter",
               kTen,
               {{"a", Account(1, 0)}, {"b", Account(1, 0)}, {"c", Account(0, 0)}},
               0,
               2.5,
               Reason::kPoolFairShare,
               true},
        CapRow{"AFinishedOrDeadSweepStaysChargedButTakesNoPart",
               kTen,
               {{"a", Account(2, 2, false)}, {"b", Account(0, 2)}},
               0,
               3,
               Reason::kPoolFairShare,
               true},
        CapRow{"ASweepThatTookMoreThanItsPartGetsNoMoreWhileAnotherWaits",
               kTen,
               {{"a", Account(0, 0)}},
               6,
               6,
               Reason::kPoolFairShare,
               true},
        CapRow{"PartsShrinkInProportionWhenTheyCannotAllBeKept",
               kTen,
               {{"a", Account(6, 0)}, {"b", Account(0, 0)}},
               0,
               2,
               Reason::kPoolFairShare,
               true},
        CapRow{"WhenEveryOtherSweepTookItsPartTheRemainderIsOpen",
               kTen,
               {{"a", Account(4, 2)}},
               0,
               4,
               Reason::kPoolExhausted,
               true},
        CapRow{"MaxPerSweepCapsBelowThePoolAndNeverWaits",
               kTenAtMostFourEach,
               {{"a", Account(0, 2)}},
               1,
               4,
               Reason::kPoolMaxPerSweep,
               false},
        CapRow{"MaxPerSweepSpentLeavesNothing",
               kTenAtMostFourEach,
               {},
               5,
               5,
               Reason::kPoolMaxPerSweep,
               false},
        CapRow{"AnOverspentPoolCapsAtWhatItHolds",
               kTen,
               {{"a", Account(12, 0, false)}},
               1,
               1,
               Reason::kPoolExhausted,
               false},
        CapRow{"AStarvedSweepTakesTheRemainderWhenNoOtherHoldsAReservation",
               kTen,
               {{"me", Account(0, 0, true, true)}, {"a", Account(1, 0)}},
               0,
               9,
               Reason::kPoolExhausted,
               false},
        CapRow{"OfTwoStarvedSweepsTheOneHoldingLessTakesTheRemainderFirst",
               kTen,
               {{"me", Account(0, 0, true, true)}, {"a", Account(4, 0, true, true)}},
               1,
               6,
               Reason::kPoolExhausted,
               false},
        CapRow{"AStarvedSweepHoldingMoreWaitsForOneHoldingLess",
               kTen,
               {{"me", Account(0, 0, true, true)}, {"a", Account(1, 0, true, true)}},
               4,
               5,
               Reason::kPoolFairShare,
               true},
        CapRow{"StarvedSweepsHoldingTheSameGoInTheOrderOfTheirKeys",
               kTen,
               {{"me", Account(0, 0, true, true)}, {"a", Account(2, 0, true, true)}},
               2,
               5,
               Reason::kPoolFairShare,
               true},
        CapRow{"AStarvedSweepStillSharesWhileAnotherHoldsAReservation",
               kTen,
               {{"me", Account(0, 0, true, true)}, {"a", Account(1, 2)}},
               0,
               5,
               Reason::kPoolFairShare,
               true}),
    [](const ::testing::TestParamInfo<CapRow>& row) { return row.param.name; });

TEST(PoolLimit, ADenialBeyondThePoolNamesItsLimitAndFigures) {
  Ledger ledger(10 * kHour);
  ledger.Hold(1 * kHour);
  ledger.Limit(3 * kHour, Reason::kPoolFairShare, true);
  std::optional<Denial> denial = ledger.Admit(2.5 * kHour);
  ASSERT_TRUE(denial.has_value());
  EXPECT_EQ(denial->reason, Reason::kPoolFairShare);
  EXPECT_TRUE(denial->waits);
  EXPECT_THAT(denial->Message(),
              HasSubstr("PoolFairShare: requested 2.5000 GPU-hours, remaining 2.0000"));
  EXPECT_FALSE(ledger.Admit(2 * kHour).has_value());
}

TEST(PoolLimit, TheSweepsOwnSmallerBudgetWins) {
  Ledger ledger(2 * kHour);
  ledger.Limit(5 * kHour, Reason::kPoolExhausted, false);
  std::optional<Denial> denial = ledger.Admit(3 * kHour);
  ASSERT_TRUE(denial.has_value());
  EXPECT_EQ(denial->reason, Reason::kBudgetExhausted);
  EXPECT_FALSE(denial->waits);
}

SweepSpec TableSpec() { return ParseSweep(testing::TableSweep()).value(); }

TEST(PoolFinish, AFairShareDenialWaitsInsteadOfEndingTheSweep) {
  SweepModel model(TableSpec());
  Denial fair{Reason::kPoolFairShare, 10, 5};
  fair.waits = true;
  EXPECT_FALSE(decisions::FinishOf(model, 0, {fair}).has_value());
  std::optional<decisions::Finish> finish =
      decisions::FinishOf(model, 0, {fair, Denial{Reason::kPoolExhausted, 10, 5}});
  ASSERT_TRUE(finish.has_value());
  EXPECT_EQ(finish->phase, SweepPhase::kBudgetExhausted);
  EXPECT_THAT(finish->message, HasSubstr("PoolExhausted"));
}

TEST(PoolFinish, ATrialWaitingForASegmentIsNotStoppedByAFairShareDenial) {
  SweepModel model(TableSpec());
  ASSERT_TRUE(model.Apply(event::TrialCreated{.at = 0, .trial = 0}).ok());
  Observed observed;
  PlannerOptions options;
  decisions::PlanInput in{model, observed, 100, options};
  for (bool waits : {true, false}) {
    Ledger ledger(10 * kHour);
    ledger.Limit(0, waits ? Reason::kPoolFairShare : Reason::kPoolExhausted, waits);
    decisions::Admitted a = decisions::ReconcileTrials(in, ledger);
    bool stopped = std::any_of(a.part.events.begin(), a.part.events.end(), [](const Event& e) {
      return std::holds_alternative<event::TrialStopped>(e);
    });
    EXPECT_EQ(stopped, !waits);
    EXPECT_TRUE(a.part.actions.empty());
  }
}

nlohmann::json PoolJson() {
  return nlohmann::json::parse(R"({"apiVersion": "budgetsweep.dev/v1alpha1", "kind": "BudgetPool",
    "metadata": {"name": "team-a"}, "spec": {"gpuHours": 8, "maxPerSweepGpuHours": 3}})");
}

TEST(ParsePool, ReadsTheSpec) {
  nlohmann::json j = PoolJson();
  // As the API server returns it.
  j["metadata"].update({{"namespace", "team"},
                        {"uid", "u"},
                        {"resourceVersion", "7"},
                        {"generation", 2},
                        {"creationTimestamp", "2026-12-01T00:00:00Z"}});
  j["status"] = {{"usedGpuHours", 1}};
  StatusOr<PoolSpec> pool = ParsePool(j);
  ASSERT_TRUE(pool.ok()) << pool.status().message();
  EXPECT_EQ(pool->name, "team-a");
  EXPECT_DOUBLE_EQ(pool->gpu_hours, 8);
  EXPECT_EQ(pool->max_per_sweep_gpu_hours, std::optional<double>(3));
}

TEST(ParsePool, NamesEveryBadField) {
  nlohmann::json j = PoolJson();
  j["kind"] = "BudgetSweep";
  j["spec"]["gpuHours"] = -1;
  j["spec"]["maxPerSweepGpuHours"] = "3";
  j["spec"]["gpuHour"] = 1;
  StatusOr<PoolSpec> pool = ParsePool(j);
  ASSERT_FALSE(pool.ok());
  const std::string m = pool.status().message();
  EXPECT_THAT(m, HasSubstr("kind: must be BudgetPool"));
  EXPECT_THAT(m, HasSubstr("spec.gpuHours: must be greater than 0, got -1"));
  EXPECT_THAT(m, HasSubstr("spec.maxPerSweepGpuHours: must be a number, got string \"3\""));
  EXPECT_THAT(m, HasSubstr("spec.gpuHour: unknown field"));
  j = PoolJson();
  j["spec"].erase("gpuHours");
  EXPECT_THAT(ParsePool(j).status().message(), HasSubstr("spec.gpuHours: required"));
}

TEST(ParsePool, ReadsThePeriodAndNamesABadOne) {
  nlohmann::json j = PoolJson();
  j["spec"]["period"] = "calendarMonth";
  EXPECT_EQ(ParsePool(j).value().period, "calendarMonth");
  j["spec"]["period"] = "720h";
  EXPECT_EQ(ParsePool(j).value().period, "720h");
  j["spec"]["period"] = "monthly";
  EXPECT_THAT(ParsePool(j).status().message(),
              HasSubstr("spec.period: must be calendarMonth or a duration in m, h or d such as "
                        "720h or 30d, got \"monthly\""));
}

TEST(PeriodSeconds, ReadsMinutesHoursAndDays) {
  EXPECT_EQ(PeriodSeconds("90m"), 5400);
  EXPECT_EQ(PeriodSeconds("720h"), 720 * kHour);
  EXPECT_EQ(PeriodSeconds("30d"), 30 * 24 * kHour);
  for (const char* bad : {"", "h", "0h", "01h", "1w", "1.5h", "-1h", "1h30m", "calendarMonth"}) {
    EXPECT_EQ(PeriodSeconds(bad), std::nullopt) << bad;
  }
}

constexpr double kDecember2025 = 1'764'547'200;  // 2025-12-01T00:00:00Z
constexpr double kJanuary2026 = 1'767'225'600;
constexpr double kDay = 24 * kHour;

TEST(RollPeriod, ADurationStartsAtFirstUseAndFollowsOnFromTheLastOne) {
  PoolSpec pool{"team", 10, std::nullopt, "10d"};
  PoolState state;
  state.accounts["a"] = Account(2, 1);
  RollPeriod(pool, kDecember2025 + 3 * kHour, &state);
  EXPECT_EQ(state.period_start, kDecember2025 + 3 * kHour);
  EXPECT_EQ(state.period_end, kDecember2025 + 3 * kHour + 10 * kDay);
  EXPECT_TRUE(state.past.empty()) << "no period had started";
  EXPECT_DOUBLE_EQ(state.accounts["a"].held(), 1 * kHour) << "what was used before is carried";

  state.accounts["a"].used_device_seconds = 5 * kHour;
  state.accounts["gone"] = Account(1, 0, /*active=*/false);
  state.accounts["gone-but-reserving"] = Account(1, 0.5, /*active=*/false);
  RollPeriod(pool, kDecember2025 + 9 * kDay, &state);
  EXPECT_EQ(state.period_end, kDecember2025 + 3 * kHour + 10 * kDay) << "not over yet";
  // Two and a half periods later: the third period since the first one.
  RollPeriod(pool, kDecember2025 + 3 * kHour + 25 * kDay, &state);
  EXPECT_EQ(state.period_start, kDecember2025 + 3 * kHour + 20 * kDay);
  EXPECT_EQ(state.period_end, kDecember2025 + 3 * kHour + 30 * kDay);
  ASSERT_EQ(state.past.size(), 1u);
  EXPECT_EQ(state.past[0].start, kDecember2025 + 3 * kHour);
  EXPECT_DOUBLE_EQ(state.past[0].used_device_seconds, (3 + 1 + 1) * kHour);
  EXPECT_FALSE(state.accounts.contains("gone")) << "its charge is in the period that ended";
  EXPECT_TRUE(state.accounts.contains("gone-but-reserving"));
  EXPECT_DOUBLE_EQ(PoolHeld(state.accounts), 1 * kHour + 0.5 * kHour)
      << "only the reservations count in the new period";
}

TEST(RollPeriod, ACalendarMonthIsTheUtcMonthAndAtMostTwelveEndedOnesAreKept) {
  PoolSpec pool{"team", 10, std::nullopt, "calendarMonth"};
  PoolState state;
  RollPeriod(pool, kDecember2025 + 14 * kDay, &state);
  EXPECT_EQ(state.period_start, kDecember2025);
  EXPECT_EQ(state.period_end, kJanuary2026) << "December carries into January";
  double t = kJanuary2026;
  for (int month = 0; month < 14; ++month) {
    RollPeriod(pool, t, &state);
    t = *state.period_end;
  }
  EXPECT_EQ(state.past.size(), kMaxPastPeriods);
  EXPECT_EQ(state.past.front().end, *state.period_start) << "the newest first";
  EXPECT_EQ(*state.period_end - *state.period_start, 28 * kDay) << "February 2027";
}

TEST(RollPeriod, WithoutAPeriodNothingChanges) {
  PoolState state;
  state.accounts["a"] = Account(2, 1, /*active=*/false);
  RollPeriod(kTen, kDecember2025, &state);
  EXPECT_EQ(state.period_start, std::nullopt);
  EXPECT_DOUBLE_EQ(state.accounts["a"].held(), 3 * kHour);
}

TEST(StoreAccount, ReplacesTheSweepsFiguresButKeepsWhatItCarries) {
  PoolState state;
  state.accounts["a"] = Account(2, 1);
  state.accounts["a"].carried_device_seconds = 2 * kHour;
  PoolAccount before = StoreAccount("a", Account(3, 0, false, true), &state);
  EXPECT_DOUBLE_EQ(before.reserved_device_seconds, 1 * kHour);
  const PoolAccount& stored = state.accounts["a"];
  EXPECT_DOUBLE_EQ(stored.used_device_seconds, 3 * kHour);
  EXPECT_DOUBLE_EQ(stored.reserved_device_seconds, 0);
  EXPECT_DOUBLE_EQ(stored.carried_device_seconds, 2 * kHour);
  EXPECT_FALSE(stored.active);
  EXPECT_TRUE(stored.starved);
  EXPECT_DOUBLE_EQ(StoreAccount("new", Account(1, 0), &state).held(), 0);
  EXPECT_EQ(state.accounts.size(), 2u);
}

TEST(CapOf, WhatASweepCarriesFromEarlierPeriodsDoesNotCount) {
  PoolAccounts accounts{{"me", Account(9, 0)}, {"other", Account(9, 0)}};
  accounts["me"].carried_device_seconds = 9 * kHour;
  accounts["other"].carried_device_seconds = 8 * kHour;
  // The pool holds 1 hour this period (other's); me, which used 9 hours in all, may take its
  // half of the 10 hours.
  PoolCap cap = CapOf(kTen, accounts, "me", 9 * kHour);
  EXPECT_DOUBLE_EQ(cap.cap_device_seconds, 9 * kHour + 5 * kHour);
  EXPECT_EQ(cap.limit, Reason::kPoolFairShare);
}

TEST(PoolStateJson, IsReadBackAsTheSameState) {
  PoolSpec pool{"team", 10, std::nullopt, "calendarMonth"};
  PoolState state;
  state.accounts["uid-a"] = PoolAccount{"a", 7200, 1800, true, false, 3600};
  state.accounts["uid-b"] = PoolAccount{"b", 900, 0, false, true, 0};
  state.period_start = kDecember2025;
  state.period_end = kJanuary2026;
  state.past.push_back(PastPeriod{kDecember2025 - 30 * kDay, kDecember2025, 4 * kHour});
  nlohmann::json j = PoolStateJson(pool, state);
  EXPECT_DOUBLE_EQ(j["usedGpuHours"].get<double>(), (3600 + 900) / kHour);
  EXPECT_DOUBLE_EQ(j["reservedGpuHours"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["remainingGpuHours"].get<double>(), 10 - 1.75);
  EXPECT_EQ(j["activeSweeps"], 1);
  EXPECT_EQ(j["period"]["end"], "2026-01-01T00:00:00Z");
  StatusOr<PoolState> read = ParsePoolState(j, "status");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(PoolStateJson(pool, *read), j);
  EXPECT_DOUBLE_EQ(read->accounts["uid-a"].carried_device_seconds, 3600);
  EXPECT_TRUE(read->accounts["uid-b"].starved);
}

TEST(ParsePoolState, NamesEveryBadField) {
  nlohmann::json j = nlohmann::json::parse(R"({
    "sweeps": [{"key": "x", "sweep": "a", "usedDeviceSeconds": "1", "reservedDeviceSeconds": 0,
                "active": true, "starved": false, "extra": 1},
               {"key": "x", "sweep": "b", "usedDeviceSeconds": 0, "reservedDeviceSeconds": 0,
                "active": true, "starved": false}],
    "period": {"start": "2025-12-01", "end": "2026-01-01T00:00:00Z"},
    "previousPeriods": {}})");
  StatusOr<PoolState> read = ParsePoolState(j, "status");
  ASSERT_FALSE(read.ok());
  const std::string m = read.status().message();
  EXPECT_THAT(m, HasSubstr("status.sweeps[0].usedDeviceSeconds: must be a number, got string"));
  EXPECT_THAT(m, HasSubstr("status.sweeps[0].extra: unknown field"));
  EXPECT_THAT(m, HasSubstr("status.sweeps[1]: a second account of key \"x\""));
  EXPECT_THAT(m, HasSubstr("status.period.start: must be a UTC time such as"));
  EXPECT_THAT(m, HasSubstr("status.previousPeriods: must be a list, got object"));
  EXPECT_TRUE(ParsePoolState(nlohmann::json::object(), "status").ok()) << "a new pool";
}

TEST(ParseSweep, APooledSweepMayLeaveItsOwnBudgetToThePool) {
  nlohmann::json j = testing::TableSweep();
  j["spec"]["budget"] = {{"poolRef", {{"name", "team-a"}}}};
  StatusOr<SweepSpec> spec = ParseSweep(j);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->budget_gpu_hours, 0);
  BindPool(PoolSpec{"team-a", 8, std::nullopt}, &*spec);
  EXPECT_DOUBLE_EQ(spec->budget_gpu_hours, 8);
  // Its own cap stays when it has one.
  j["spec"]["budget"]["gpuHours"] = 2;
  spec = ParseSweep(j);
  BindPool(PoolSpec{"team-a", 8, std::nullopt}, &*spec);
  EXPECT_DOUBLE_EQ(spec->budget_gpu_hours, 2);
  j["spec"]["budget"] = nlohmann::json::object();
  EXPECT_THAT(ParseSweep(j).status().message(),
              HasSubstr("spec.budget.gpuHours: required unless poolRef names a BudgetPool"));
}

TEST(ParseSweep, ReadsThePoolRef) {
  nlohmann::json j = testing::TableSweep();
  j["spec"]["budget"]["poolRef"] = {{"name", "team-a"}};
  EXPECT_EQ(ParseSweep(j).value().pool_name, "team-a");
  j["spec"]["budget"]["poolRef"] = {{"name", "Team A"}};
  EXPECT_THAT(ParseSweep(j).status().message(),
              HasSubstr("spec.budget.poolRef.name: must be a BudgetPool's name"));
}

// --- Sweeps sharing a pool, under any interleaving ---

// One sweep as the pool sees it: what its journal and its segments say (they survive a crash of
// its runner; its supervisors run each segment to at most its deadline, runner or not).
struct SimSweep {
  std::string key;
  double budget = 0;
  bool alive = true;
  double ended_charge = 0;      // device-seconds of ended segments
  std::vector<double> running;  // each running segment's reservation
  double Held() const {
    double held = ended_charge;
    for (double r : running) held += r;
    return held;
  }
};

// One pass of sweep `s`: take the gate, cap its ledger, admit `requests` in turn (the planner's
// Launch), commit what it holds, and only then start the admitted segments. `crash_before_start`
// kills the runner between the commit and the starts.
void Pass(SimSweep& s, const PoolSpec& pool, PoolAccounts& accounts,
          const std::vector<double>& requests, bool crash_before_start) {
  // The gate's view: a dead runner's account no longer counts in the fair share.
  for (auto& [key, account] : accounts) {
    if (key != s.key) account.active = account.active && account.sweep != "dead";
  }
  double held = s.Held();
  PoolCap cap = CapOf(pool, accounts, s.key, held);
  Ledger ledger(s.budget);
  ledger.Hold(held);
  ledger.Limit(cap.cap_device_seconds, cap.limit, cap.waits);
  std::vector<double> admitted;
  bool starved = false;
  for (double r : requests) {
    if (std::optional<Denial> d = ledger.Admit(r)) {
      starved = starved || d->waits;
    } else {
      admitted.push_back(r);
    }
  }
  accounts[s.key] = PoolAccount{"alive", s.ended_charge,
                                ledger.used() + ledger.reserved() - s.ended_charge, true, starved};
  if (crash_before_start) {
    s.alive = false;
    accounts[s.key].sweep = "dead";
    return;
  }
  s.running.insert(s.running.end(), admitted.begin(), admitted.end());
}

RC_GTEST_PROP(PoolProperty, SweepsSharingAPoolNeverHoldMoreThanIt, ()) {
  const int sweeps = *rc::gen::inRange(2, 6);
  PoolSpec pool{"team", *rc::gen::inRange(1, 50) / 10.0, std::nullopt};
  if (*rc::gen::arbitrary<bool>()) pool.max_per_sweep_gpu_hours = *rc::gen::inRange(1, 30) / 10.0;
  std::vector<SimSweep> sim;
  for (int i = 0; i < sweeps; ++i) {
    SimSweep s;
    s.key = "sweep-" + std::to_string(i);
    s.budget = *rc::gen::inRange(1, 60) / 10.0 * kHour;
    sim.push_back(s);
  }
  PoolAccounts accounts;
  double charged = 0;  // what every ended segment really cost
  const int steps = *rc::gen::inRange(1, 200);
  for (int step = 0; step < steps; ++step) {
    SimSweep& s = sim[*rc::gen::inRange<size_t>(0, sim.size())];
    switch (*rc::gen::inRange(0, 4)) {
      case 0:  // a pass, unless the runner is dead (resume is a pass of a new runner)
      case 1: {
        s.alive = true;
        auto requests = *rc::gen::container<std::vector<double>>(
            *rc::gen::inRange<size_t>(0, 4),
            rc::gen::map(rc::gen::inRange(1, 4000), [](int v) { return v * 1.0; }));
        Pass(s, pool, accounts, requests, *rc::gen::inRange(0, 5) == 0);
        break;
      }
      case 2:  // a segment ends having used at most its reservation (its supervisor's deadline)
        if (!s.running.empty()) {
          size_t i = *rc::gen::inRange<size_t>(0, s.running.size());
          double cost = s.running[i] * *rc::gen::inRange(0, 101) / 100.0;
          s.ended_charge += cost;
          charged += cost;
          s.running.erase(s.running.begin() + static_cast<std::ptrdiff_t>(i));
        }
        break;
      default:  // kill -9 of the runner
        s.alive = false;
        if (accounts.contains(s.key)) accounts[s.key].sweep = "dead";
        break;
    }
    double held = 0;
    for (const SimSweep& x : sim) {
      held += x.Held();
      // The pool never counts less than a sweep may still spend.
      if (!x.running.empty()) RC_ASSERT(accounts.at(x.key).held() >= x.Held() - 1e-6);
      if (pool.max_per_sweep_gpu_hours) {
        RC_ASSERT(x.Held() <= *pool.max_per_sweep_gpu_hours * kHour + 1e-6);
      }
      RC_ASSERT(x.Held() <= x.budget + 1e-6);
    }
    RC_ASSERT(held <= pool.gpu_hours * kHour + 1e-6);
    RC_ASSERT(charged <= pool.gpu_hours * kHour + 1e-6);
  }
}

}  // namespace
}  // namespace bsw
