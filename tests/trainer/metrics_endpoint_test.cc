// Scrapes a short real run and checks every series documented in trainer-image/README.md.

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <thread>

#include "tests/trainer/trainer_process.h"

namespace bsw::trainer::testing {
namespace {

int WaitForPort(const TrainerProcess& process) {
  const std::regex line("serving metrics on 127\\.0\\.0\\.1:([0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch match;
    const std::string out = process.StdoutSoFar();
    if (std::regex_search(out, match, line)) return std::stoi(match[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

TEST(TrainerMetrics, EndpointServesEveryDocumentedSeriesDuringARun) {
  std::vector<std::string> flags = SmallRunFlags();
  flags.insert(flags.end(), {"--epochs=2", "--metrics-port=0", "--metrics-host=127.0.0.1",
                             "--linger-seconds=5", "--device=cpu"});
  TrainerProcess process(flags, {"BUDGETSWEEP_SWEEP=sw", "BUDGETSWEEP_TRIAL=t7"});
  const int port = WaitForPort(process);
  ASSERT_GT(port, 0) << process.StderrSoFar();
  httplib::Client client("127.0.0.1", port);
  std::string body;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto response = client.Get("/metrics");
    if (response && response->status == 200) body = response->body;
    if (body.find("metric=\"test_accuracy\"") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (const char* series : {
           "budgetsweep_trainer_objective{metric=\"validation_accuracy\",resource=\"1\",sweep="
           "\"sw\","
           "trial=\"t7\"}",
           "budgetsweep_trainer_objective{metric=\"validation_accuracy\",resource=\"2\",sweep="
           "\"sw\","
           "trial=\"t7\"}",
           "budgetsweep_trainer_objective{metric=\"validation_loss\",resource=\"2\",sweep=\"sw\","
           "trial=\"t7\"}",
           "budgetsweep_trainer_objective{metric=\"test_accuracy\",resource=\"2\",sweep=\"sw\","
           "trial=\"t7\"}",
           "budgetsweep_trainer_resource_completed{sweep=\"sw\",trial=\"t7\"} 2",
           "budgetsweep_trainer_loss{sweep=\"sw\",trial=\"t7\"}",
           "budgetsweep_trainer_learning_rate{sweep=\"sw\",trial=\"t7\"}",
           "budgetsweep_trainer_samples_per_second{sweep=\"sw\",trial=\"t7\"}",
           "budgetsweep_trainer_samples_total{sweep=\"sw\",trial=\"t7\"} 1024",
           "budgetsweep_trainer_optimizer_steps_total{sweep=\"sw\",trial=\"t7\"} 16",
           "budgetsweep_trainer_skipped_steps_total{sweep=\"sw\",trial=\"t7\"} 0",
           "budgetsweep_trainer_data_wait_ratio{sweep=\"sw\",trial=\"t7\"}",
           "budgetsweep_trainer_device_memory_bytes{sweep=\"sw\",trial=\"t7\"}",
           "budgetsweep_trainer_diverged{sweep=\"sw\",trial=\"t7\"} 0",
           "budgetsweep_trainer_info{device=\"cpu\",libtorch_version=\"",
       }) {
    EXPECT_NE(body.find(series), std::string::npos) << series << "\n" << body;
  }
  EXPECT_NE(body.find("workers=\"1\"} 1"), std::string::npos) << body;
  EXPECT_EQ(process.Wait().exit_code, 0);
}

// Probe mode (--probe-steps): 4 warm-up steps (prefetch 2 + 2), then 12 measured ones across
// two 8-step epochs; the marker series appears with the figures, no evaluation, no checkpoint,
// and a SIGTERM ends the linger at once.
TEST(TrainerMetrics, ProbeModeReportsItsFiguresThenStopsLingeringOnSigterm) {
  const std::string checkpoints = FreshDir("probe_checkpoints");
  std::vector<std::string> flags = SmallRunFlags();
  flags.insert(flags.end(),
               {"--probe-steps=12", "--prefetch=2", "--metrics-port=0", "--metrics-host=127.0.0.1",
                "--linger-seconds=120", "--device=cpu", "--checkpoint-dir=" + checkpoints});
  TrainerProcess process(flags, {"BUDGETSWEEP_SWEEP=sw", "BUDGETSWEEP_TRIAL=p0"});
  const int port = WaitForPort(process);
  ASSERT_GT(port, 0) << process.StderrSoFar();
  httplib::Client client("127.0.0.1", port);
  const std::string marker =
      "budgetsweep_trainer_probe_measured_steps{sweep=\"sw\",trial=\"p0\"} 12";
  std::string body;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    auto response = client.Get("/metrics");
    if (response && response->status == 200) body = response->body;
    if (body.find(marker) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(body.find(marker), std::string::npos) << body << process.StderrSoFar();
  EXPECT_NE(body.find("budgetsweep_trainer_optimizer_steps_total{sweep=\"sw\",trial=\"p0\"} 16"),
            std::string::npos)
      << body;
  EXPECT_NE(body.find("budgetsweep_trainer_samples_per_second{"), std::string::npos) << body;
  EXPECT_NE(body.find("budgetsweep_trainer_data_wait_ratio{"), std::string::npos) << body;
  EXPECT_EQ(body.find("budgetsweep_trainer_objective{"), std::string::npos) << body;
  const auto stopped_at = std::chrono::steady_clock::now();
  process.Signal(SIGTERM);
  const ProcessResult result = process.Wait();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_LT(std::chrono::steady_clock::now() - stopped_at, std::chrono::seconds(10));
  EXPECT_NE(result.err.find("probe: 12 optimizer steps after 4 warm-up steps"), std::string::npos)
      << result.err;
  EXPECT_TRUE(std::filesystem::is_empty(checkpoints));
}

}  // namespace
}  // namespace bsw::trainer::testing
