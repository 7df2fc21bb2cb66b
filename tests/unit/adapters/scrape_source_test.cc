#include "operator/adapters/prometheus/scrape_source.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>

namespace bsw::prom {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

std::vector<Sample> Parse(const std::string& text) {
  StatusOr<std::vector<Sample>> samples = ParseTextFormat(text);
  EXPECT_TRUE(samples.ok()) << samples.status().message();
  return samples.ok() ? *samples : std::vector<Sample>{};
}

TEST(TrialMetricsFromSamples, MapsEveryTrainerSeries) {
  StatusOr<TrialMetrics> metrics = TrialMetricsFromSamples(
      Parse("budgetsweep_trainer_objective{sweep=\"s\",trial=\"t\",metric=\"acc\",resource=\"1\"} "
            "0.5\n"
            "budgetsweep_trainer_objective{sweep=\"s\",trial=\"t\",metric=\"acc\",resource=\"3\"} "
            "NaN\n"
            "budgetsweep_trainer_objective{sweep=\"s\",trial=\"t\",metric=\"loss\",resource=\"3\"} "
            "9\n"
            "budgetsweep_trainer_resource_completed{trial=\"t\"} 3\n"
            "budgetsweep_trainer_loss 0.7\n"
            "budgetsweep_trainer_samples_per_second 1200\n"
            "budgetsweep_trainer_data_wait_ratio 0.1\n"
            "budgetsweep_trainer_accelerator_utilization_ratio 0.9\n"
            "budgetsweep_trainer_probe_measured_steps 30\n"
            "unrelated_metric 5\n"),
      "s", "t", "acc");
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  ASSERT_EQ(metrics->objective_by_resource.size(), 2u);
  EXPECT_EQ(metrics->objective_by_resource.at(1), 0.5);
  EXPECT_TRUE(std::isnan(metrics->objective_by_resource.at(3)));
  EXPECT_EQ(metrics->resource_completed, 3);
  EXPECT_EQ(metrics->loss, 0.7);
  EXPECT_EQ(metrics->samples_per_second, 1200);
  EXPECT_EQ(metrics->data_wait_ratio, 0.1);
  EXPECT_EQ(metrics->accelerator_utilization_ratio, 0.9);
  EXPECT_EQ(metrics->probe_measured_steps, 30);
}

TEST(TrialMetricsFromSamples, AbsentSeriesStayUnknown) {
  StatusOr<TrialMetrics> metrics =
      TrialMetricsFromSamples(Parse("budgetsweep_trainer_diverged 0\n"), "s", "t", "acc");
  ASSERT_TRUE(metrics.ok());
  EXPECT_TRUE(metrics->objective_by_resource.empty());
  EXPECT_FALSE(metrics->resource_completed.has_value());
  EXPECT_FALSE(metrics->loss.has_value());
  EXPECT_FALSE(metrics->probe_measured_steps.has_value());
}

TEST(TrialMetricsFromSamples, IgnoresSeriesOfAnotherTrialOrSweep) {
  StatusOr<TrialMetrics> metrics = TrialMetricsFromSamples(
      Parse("budgetsweep_trainer_loss{sweep=\"s\",trial=\"other\"} 1\n"
            "budgetsweep_trainer_resource_completed{sweep=\"other\",trial=\"t\"} 2\n"),
      "s", "t", "acc");
  ASSERT_TRUE(metrics.ok());
  EXPECT_FALSE(metrics->loss.has_value());
  EXPECT_FALSE(metrics->resource_completed.has_value());
}

TEST(TrialMetricsFromSamples, RejectsObjectiveWithoutNumericResource) {
  StatusOr<TrialMetrics> metrics = TrialMetricsFromSamples(
      Parse("budgetsweep_trainer_objective{metric=\"acc\",resource=\"last\"} 1\n"), "s", "t",
      "acc");
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), StatusCode::kInvalidArgument);
}

class ScrapeMetricSourceTest : public ::testing::Test {
 protected:
  // One exposer per process, never destroyed: civetweb takes about 2 s to shut down.
  static void SetUpTestSuite() {
    if (exposer_ != nullptr) return;
    exposer_ = new ::prometheus::Exposer("127.0.0.1:0");
    port_ = exposer_->GetListeningPorts().at(0);
  }

  void SetUp() override {
    registry_ = std::make_shared<::prometheus::Registry>();
    exposer_->RegisterCollectable(registry_);
  }

  void TearDown() override { exposer_->RemoveCollectable(registry_); }

  static SegmentStatus Segment(const std::string& path = "/metrics") {
    SegmentStatus segment;
    segment.trial = "t7";
    segment.metrics_url = "http://127.0.0.1:" + std::to_string(port_) + path;
    return segment;
  }

  static inline ::prometheus::Exposer* exposer_ = nullptr;
  static inline int port_ = 0;
  std::shared_ptr<::prometheus::Registry> registry_;
};

TEST_F(ScrapeMetricSourceTest, ReadsObjectiveAndProgressFromRealExposer) {
  auto& objective = ::prometheus::BuildGauge()
                        .Name("budgetsweep_trainer_objective")
                        .Help("Objective at each evaluated resource.")
                        .Register(*registry_);
  ::prometheus::Labels labels{{"sweep", "s"}, {"trial", "t7"}, {"metric", "validation_accuracy"}};
  labels["resource"] = "1";
  objective.Add(labels).Set(0.42);
  labels["resource"] = "3";
  objective.Add(labels).Set(std::numeric_limits<double>::quiet_NaN());
  ::prometheus::BuildGauge()
      .Name("budgetsweep_trainer_resource_completed")
      .Register(*registry_)
      .Add({{"sweep", "s"}, {"trial", "t7"}})
      .Set(3);

  ScrapeMetricSource source;
  StatusOr<TrialMetrics> metrics = source.Read("s", Segment(), "validation_accuracy");
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_THAT(metrics->objective_by_resource,
              ElementsAre(Pair(1.0, 0.42), Pair(3.0, testing::IsNan())));
  EXPECT_EQ(metrics->resource_completed, 3);
}

TEST_F(ScrapeMetricSourceTest, MissingPathIsUnavailable) {
  ScrapeMetricSource source;
  StatusOr<TrialMetrics> metrics = source.Read("s", Segment("/nothing-here"), "acc");
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(metrics.status().message(), HasSubstr("HTTP 404"));
}

int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  return ntohs(addr.sin_port);
}

TEST(ScrapeMetricSource, UnreachableEndpointIsUnavailable) {
  SegmentStatus segment;
  segment.trial = "t";
  segment.metrics_url = "http://127.0.0.1:" + std::to_string(ClosedPort()) + "/metrics";
  ScrapeMetricSource source(0.5);
  StatusOr<TrialMetrics> metrics = source.Read("s", segment, "acc");
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), StatusCode::kUnavailable);
}

TEST(ScrapeMetricSource, NoEndpointYetIsUnavailable) {
  ScrapeMetricSource source;
  StatusOr<TrialMetrics> metrics = source.Read("s", SegmentStatus{}, "acc");
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace bsw::prom
