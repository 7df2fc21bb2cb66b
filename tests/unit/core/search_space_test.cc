#include "operator/core/search_space.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <set>
#include <string>

namespace bsw {
namespace {

using nlohmann::json;

ParamSpec Range(const std::string& name, ParamType type, double min, double max, bool log = false) {
  ParamSpec p;
  p.name = name;
  p.type = type;
  p.min = min;
  p.max = max;
  p.log = log;
  return p;
}

ParamSpec Values(const std::string& name, ParamType type, std::vector<json> values) {
  ParamSpec p;
  p.name = name;
  p.type = type;
  p.values = std::move(values);
  return p;
}

std::vector<ParamSpec> MixedSpace() {
  return {Values("batch-size", ParamType::kChoice, {64, 128, 256}),
          Range("layers", ParamType::kInt, 1, 8), Range("lr", ParamType::kLogUniform, 1e-4, 1e-1),
          Range("warmup", ParamType::kUniform, 0, 0.1)};
}

TEST(SearchSpace, SameSeedGivesTheSameConfigurationsInTheSameOrder) {
  SearchSpace a(MixedSpace(), Algorithm::kAsha, 42);
  SearchSpace b(MixedSpace(), Algorithm::kAsha, 42);
  for (int64_t i = 0; i < 200; ++i) EXPECT_EQ(a.ConfigAt(i), b.ConfigAt(i)) << "index " << i;
}

TEST(SearchSpace, ConfigurationDependsOnlyOnSeedAndIndex) {
  SearchSpace space(MixedSpace(), Algorithm::kAsha, 42);
  Config later = space.ConfigAt(57);
  for (int64_t i = 0; i < 57; ++i) (void)space.ConfigAt(i);
  EXPECT_EQ(space.ConfigAt(57), later);
}

TEST(SearchSpace, DifferentSeedsGiveDifferentConfigurations) {
  SearchSpace a(MixedSpace(), Algorithm::kAsha, 1);
  SearchSpace b(MixedSpace(), Algorithm::kAsha, 2);
  int same = 0;
  for (int64_t i = 0; i < 100; ++i) same += a.ConfigAt(i) == b.ConfigAt(i);
  EXPECT_EQ(same, 0);
}

TEST(SearchSpace, ConsecutiveConfigurationsDiffer) {
  SearchSpace space(MixedSpace(), Algorithm::kRandom, 3);
  std::set<std::string> seen;
  for (int64_t i = 0; i < 500; ++i) seen.insert(json(space.ConfigAt(i)).dump());
  EXPECT_EQ(seen.size(), 500u);
}

TEST(SearchSpace, SampledSpacesAreUnbounded) {
  EXPECT_EQ(SearchSpace(MixedSpace(), Algorithm::kAsha, 0).FiniteSize(), std::nullopt);
  EXPECT_EQ(SearchSpace(MixedSpace(), Algorithm::kRandom, 0).FiniteSize(), std::nullopt);
}

RC_GTEST_PROP(SearchSpace, SampledValuesStayWithinTheirBounds, (uint64_t seed)) {
  const double lo = *rc::gen::inRange(-1000, 1000);
  const double width = *rc::gen::inRange(1, 1000);
  const int64_t int_lo = *rc::gen::inRange(1, 100);
  const int64_t int_hi = int_lo + *rc::gen::inRange(1, 10000);
  const double log_lo = std::pow(10.0, *rc::gen::inRange(-8, 2));
  const double log_hi = log_lo * *rc::gen::inRange(2, 100000);
  std::vector<ParamSpec> params = {
      Range("a-uniform", ParamType::kUniform, lo, lo + width),
      Range("b-log", ParamType::kLogUniform, log_lo, log_hi),
      Range("c-int", ParamType::kInt, static_cast<double>(int_lo), static_cast<double>(int_hi)),
      Range("d-logint", ParamType::kInt, static_cast<double>(int_lo), static_cast<double>(int_hi),
            true),
      Values("e-choice", ParamType::kChoice, {"x", "y", "z"})};
  SearchSpace space(params, Algorithm::kAsha, seed);
  for (int64_t i = 0; i < 50; ++i) {
    Config c = space.ConfigAt(i);
    RC_ASSERT(c.size() == params.size());
    for (size_t k = 0; k < 4; ++k) {
      RC_ASSERT(c[k].first == params[k].name);
      RC_ASSERT(c[k].second.is_number());
      double v = c[k].second.get<double>();
      RC_ASSERT(v >= params[k].min);
      RC_ASSERT(v <= params[k].max);
    }
    RC_ASSERT(c[2].second.is_number_integer());
    RC_ASSERT(c[3].second.is_number_integer());
    std::string choice = c[4].second.get<std::string>();
    RC_ASSERT(choice == "x" || choice == "y" || choice == "z");
  }
}

TEST(SearchSpace, LogUniformSpreadsEvenlyOverDecades) {
  SearchSpace space({Range("lr", ParamType::kLogUniform, 1e-4, 1e0)}, Algorithm::kAsha, 9);
  int per_decade[4] = {0, 0, 0, 0};
  for (int64_t i = 0; i < 4000; ++i) {
    double v = space.ConfigAt(i)[0].second.get<double>();
    ++per_decade[std::clamp(static_cast<int>(std::floor(std::log10(v))) + 4, 0, 3)];
  }
  for (int count : per_decade) EXPECT_NEAR(count, 1000, 150);
}

TEST(SearchSpace, GridAlgorithmEnumeratesTheFullProductExactlyOnce) {
  std::vector<ParamSpec> params = {Values("act", ParamType::kChoice, {"relu", "gelu", "tanh"}),
                                   Range("depth", ParamType::kInt, 1, 4),
                                   Values("opt", ParamType::kGrid, {"adamw", "sgd"})};
  SearchSpace space(params, Algorithm::kGrid, 5);
  ASSERT_EQ(space.FiniteSize(), 24);
  std::set<std::string> seen;
  for (int64_t i = 0; i < 24; ++i) seen.insert(json(space.ConfigAt(i)).dump());
  EXPECT_EQ(seen.size(), 24u);
  EXPECT_TRUE(seen.contains(json(Config{{"act", "tanh"}, {"depth", 4}, {"opt", "sgd"}}).dump()));
  EXPECT_TRUE(seen.contains(json(Config{{"act", "relu"}, {"depth", 1}, {"opt", "adamw"}}).dump()));
}

TEST(SearchSpace, GridParamsUnderAshaCycleThroughTheirPoints) {
  std::vector<ParamSpec> params = {Values("layers", ParamType::kGrid, {2, 4, 8}),
                                   Range("lr", ParamType::kLogUniform, 1e-4, 1e-1)};
  SearchSpace space(params, Algorithm::kAsha, 11);
  EXPECT_EQ(space.FiniteSize(), std::nullopt);
  std::set<double> lrs;
  for (int64_t i = 0; i < 30; ++i) {
    Config c = space.ConfigAt(i);
    EXPECT_EQ(c[0].second, params[0].values[static_cast<size_t>(i % 3)]) << "index " << i;
    lrs.insert(c[1].second.get<double>());
  }
  EXPECT_EQ(lrs.size(), 30u);
}

TEST(SearchSpace, AddingAGridDimensionKeepsTheSampledStreamAligned) {
  ParamSpec lr = Range("lr", ParamType::kUniform, 0, 1);
  SearchSpace without({lr}, Algorithm::kAsha, 4);
  SearchSpace with({lr, Values("z-grid", ParamType::kGrid, {1, 2})}, Algorithm::kAsha, 4);
  for (int64_t i = 0; i < 20; ++i) EXPECT_EQ(without.ConfigAt(i)[0], with.ConfigAt(i)[0]);
}

TEST(FormatParamValue, WritesNumbersAsATrainerFlagExpectsThem) {
  EXPECT_EQ(FormatParamValue(json(128)), "128");
  EXPECT_EQ(FormatParamValue(json(-3)), "-3");
  EXPECT_EQ(FormatParamValue(json(0.5)), "0.5");
  EXPECT_EQ(FormatParamValue(json(0.003)), "0.003");
  EXPECT_EQ(FormatParamValue(json(0.1 + 0.2)), "0.30000000000000004");
  EXPECT_EQ(std::stod(FormatParamValue(json(1.2345678901234567e-5))), 1.2345678901234567e-5);
  EXPECT_EQ(FormatParamValue(json("adamw")), "adamw");
  EXPECT_EQ(FormatParamValue(json(true)), "true");
}

}  // namespace
}  // namespace bsw
