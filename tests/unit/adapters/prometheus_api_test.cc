#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "operator/adapters/prometheus/api_source.h"
#include "operator/adapters/system_clock.h"
#include "tests/mocks/fake_clock.h"

namespace bsw::prom {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr double kNow = 1700000000.5;
constexpr char kObjective[] =
    "budgetsweep_trainer_objective{sweep=\"s\",trial=\"t7\",metric=\"validation_accuracy\"}";
constexpr char kCompleted[] = "budgetsweep_trainer_resource_completed{sweep=\"s\",trial=\"t7\"}";

struct Reply {
  int status = 200;
  std::string body;
};

std::string Vector(const std::string& results, const std::string& extra = "") {
  return R"({"status":"success",)" + extra + R"("data":{"resultType":"vector","result":[)" +
         results + "]}}";
}

// One vector element: labels as JSON object members, and its value string.
std::string Element(const std::string& labels, const std::string& value) {
  return R"({"metric":{)" + labels + R"(},"value":[)" + std::to_string(kNow) + R"(,")" + value +
         R"("]})";
}

// A local server that plays Prometheus' /api/v1/query: it answers each query from `replies`
// (an empty vector when absent) and records what it was asked.
class FakePrometheus {
 public:
  FakePrometheus() {
    server_.Get("/prefix/api/v1/query",
                [this](const httplib::Request& req, httplib::Response& res) {
                  std::string query = req.get_param_value("query");
                  Reply reply{200, Vector("")};
                  std::function<void()> delay;
                  {
                    std::lock_guard<std::mutex> lock(mu_);
                    queries_.push_back(query);
                    times_.push_back(req.get_param_value("time"));
                    if (auto it = replies_.find(query); it != replies_.end()) reply = it->second;
                    delay = delay_;
                  }
                  if (delay) delay();
                  res.status = reply.status;
                  res.set_content(reply.body, "application/json");
                });
    server_.set_tcp_nodelay(true);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakePrometheus() {
    server_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/prefix/"; }
  void Set(const std::string& query, Reply reply) {
    std::lock_guard<std::mutex> lock(mu_);
    replies_[query] = std::move(reply);
  }
  void SetDelay(std::function<void()> delay) {
    std::lock_guard<std::mutex> lock(mu_);
    delay_ = std::move(delay);
  }
  std::vector<std::string> queries() {
    std::lock_guard<std::mutex> lock(mu_);
    return queries_;
  }
  std::vector<std::string> times() {
    std::lock_guard<std::mutex> lock(mu_);
    return times_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, Reply> replies_;
  std::function<void()> delay_;
  std::vector<std::string> queries_;
  std::vector<std::string> times_;
};

SegmentStatus Segment() {
  SegmentStatus segment;
  segment.trial = "t7";
  return segment;
}

std::string Ts(double age) { return std::to_string(kNow - age); }

class PrometheusApiSourceTest : public ::testing::Test {
 protected:
  StatusOr<TrialMetrics> Read(double staleness = 300) {
    source_ = std::make_unique<PrometheusApiSource>(prom_.url(), 1.0, clock_, staleness);
    return source_->Read("s", Segment(), "validation_accuracy");
  }

  FakePrometheus prom_;
  FakeClock clock_{kNow};
  std::unique_ptr<PrometheusApiSource> source_;
};

TEST(EscapePromQLString, EscapesQuotesBackslashesAndNewlines) {
  EXPECT_EQ(EscapePromQLString("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapePromQLString("plain-name_1"), "plain-name_1");
}

TEST_F(PrometheusApiSourceTest, ReadsVectorsAtExplicitTimeWithNaNAndInf) {
  const std::string obj_labels =
      R"("__name__":"budgetsweep_trainer_objective","sweep":"s","trial":"t7","metric":"validation_accuracy",)";
  const std::string ts_labels = R"("sweep":"s","trial":"t7","metric":"validation_accuracy",)";
  prom_.Set(kObjective, {200, Vector(Element(obj_labels + R"("resource":"1")", "0.42") + "," +
                                     Element(obj_labels + R"("resource":"3")", "NaN") + "," +
                                     Element(obj_labels + R"("resource":"9")", "+Inf"))});
  prom_.Set(std::string("timestamp(") + kObjective + ")",
            {200, Vector(Element(ts_labels + R"("resource":"1")", Ts(20)) + "," +
                         Element(ts_labels + R"("resource":"3")", Ts(5)) + "," +
                         Element(ts_labels + R"("resource":"9")", Ts(5)))});
  prom_.Set(kCompleted,
            {200, Vector(Element(R"("__name__":"budgetsweep_trainer_resource_completed",)"
                                 R"("sweep":"s","trial":"t7")",
                                 "3"))});
  prom_.Set(std::string("timestamp(") + kCompleted + ")",
            {200, Vector(Element(R"("sweep":"s","trial":"t7")", Ts(2)))});
  const std::string loss = "budgetsweep_trainer_loss{sweep=\"s\",trial=\"t7\"}";
  prom_.Set(loss, {200, Vector(Element(R"("__name__":"budgetsweep_trainer_loss","sweep":"s",)"
                                       R"("trial":"t7")",
                                       "-Inf"))});
  prom_.Set("timestamp(" + loss + ")",
            {200, Vector(Element(R"("sweep":"s","trial":"t7")", Ts(1)))});

  StatusOr<TrialMetrics> metrics = Read();
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_THAT(metrics->objective_by_resource,
              ElementsAre(Pair(1.0, 0.42), Pair(3.0, testing::IsNan()),
                          Pair(9.0, std::numeric_limits<double>::infinity())));
  EXPECT_EQ(metrics->resource_completed, 3);
  EXPECT_EQ(metrics->loss, -std::numeric_limits<double>::infinity());
  EXPECT_FALSE(metrics->samples_per_second.has_value());

  std::vector<std::string> queries = prom_.queries();
  ASSERT_GE(queries.size(), 2u);
  EXPECT_EQ(queries[0], kObjective);
  EXPECT_EQ(queries[1], std::string("timestamp(") + kObjective + ")");
  EXPECT_THAT(queries, testing::Contains(kCompleted));
  EXPECT_THAT(queries, testing::Contains(
                           "budgetsweep_trainer_probe_measured_steps{sweep=\"s\",trial=\"t7\"}"));
  for (const std::string& time : prom_.times()) EXPECT_EQ(time, "1700000000.500");

  const std::vector<QueryRecord>& records = source_->LastQueries();
  ASSERT_EQ(records.size(), 7u);
  EXPECT_EQ(records[0].query, kObjective);
  EXPECT_EQ(records[0].evaluated_at, kNow);
  EXPECT_NEAR(records[0].sample_age_seconds, 20, 1e-3);  // the oldest sample used
  EXPECT_EQ(records[1].query, kCompleted);
  EXPECT_NEAR(records[1].sample_age_seconds, 2, 1e-3);
  EXPECT_TRUE(std::isnan(records[3].sample_age_seconds));  // samples_per_second: empty
}

TEST_F(PrometheusApiSourceTest, EmptyResultIsUnknownNotZero) {
  StatusOr<TrialMetrics> metrics = Read();
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_TRUE(metrics->objective_by_resource.empty());
  EXPECT_FALSE(metrics->resource_completed.has_value());
  EXPECT_FALSE(metrics->loss.has_value());
  // No timestamp() query for an empty result.
  EXPECT_EQ(prom_.queries().size(), 7u);
}

TEST_F(PrometheusApiSourceTest, StaleSamplesAreUnknown) {
  prom_.Set(kCompleted,
            {200, Vector(Element(R"("__name__":"budgetsweep_trainer_resource_completed",)"
                                 R"("sweep":"s","trial":"t7")",
                                 "3"))});
  prom_.Set(std::string("timestamp(") + kCompleted + ")",
            {200, Vector(Element(R"("sweep":"s","trial":"t7")", Ts(90)))});
  StatusOr<TrialMetrics> fresh = Read(120);
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  EXPECT_EQ(fresh->resource_completed, 3);
  StatusOr<TrialMetrics> stale = Read(60);
  ASSERT_TRUE(stale.ok()) << stale.status().message();
  EXPECT_FALSE(stale->resource_completed.has_value());
  EXPECT_TRUE(std::isnan(source_->LastQueries().at(1).sample_age_seconds));
}

TEST_F(PrometheusApiSourceTest, HttpErrorsCarryPrometheusErrorTypeAndMessage) {
  const std::string error_body =
      R"({"status":"error","errorType":"bad_data","error":"parse error at char 3"})";
  prom_.Set(kObjective, {400, error_body});
  StatusOr<TrialMetrics> bad = Read();
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("HTTP 400"));
  EXPECT_THAT(bad.status().message(), HasSubstr("bad_data: parse error at char 3"));

  prom_.Set(kObjective,
            {422, R"({"status":"error","errorType":"execution","error":"many-to-many"})"});
  StatusOr<TrialMetrics> execution = Read();
  ASSERT_FALSE(execution.ok());
  EXPECT_EQ(execution.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(execution.status().message(), HasSubstr("execution: many-to-many"));

  prom_.Set(kObjective,
            {503, R"({"status":"error","errorType":"timeout","error":"query timed out"})"});
  StatusOr<TrialMetrics> unavailable = Read();
  ASSERT_FALSE(unavailable.ok());
  EXPECT_EQ(unavailable.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(unavailable.status().message(), HasSubstr("HTTP 503"));
  EXPECT_THAT(unavailable.status().message(), HasSubstr("timeout: query timed out"));
}

TEST_F(PrometheusApiSourceTest, StatusErrorAndNonJsonAreErrors) {
  prom_.Set(kObjective,
            {200, R"({"status":"error","errorType":"internal","error":"storage broken"})"});
  StatusOr<TrialMetrics> status_error = Read();
  ASSERT_FALSE(status_error.ok());
  EXPECT_EQ(status_error.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(status_error.status().message(), HasSubstr("internal: storage broken"));

  prom_.Set(kObjective, {200, "<html>proxy error</html>"});
  StatusOr<TrialMetrics> not_json = Read();
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(not_json.status().message(), HasSubstr("not a JSON object"));

  prom_.Set(kObjective,
            {200, R"({"status":"success","data":{"resultType":"matrix","result":[]}})"});
  StatusOr<TrialMetrics> matrix = Read();
  ASSERT_FALSE(matrix.ok());
  EXPECT_EQ(matrix.status().code(), StatusCode::kInvalidArgument);

  prom_.Set(kObjective, {200, Vector(Element(R"("resource":"1")", "zero"))});
  StatusOr<TrialMetrics> bad_value = Read();
  ASSERT_FALSE(bad_value.ok());
  EXPECT_THAT(bad_value.status().message(), HasSubstr("unparsable value 'zero'"));
}

TEST_F(PrometheusApiSourceTest, WarningsAreAcceptedAndKept) {
  prom_.Set(kCompleted,
            {200, Vector(Element(R"("__name__":"budgetsweep_trainer_resource_completed",)"
                                 R"("sweep":"s","trial":"t7")",
                                 "2"),
                         R"("warnings":["partial response: store down"],)")});
  prom_.Set(std::string("timestamp(") + kCompleted + ")",
            {200, Vector(Element(R"("sweep":"s","trial":"t7")", Ts(1)))});
  StatusOr<TrialMetrics> metrics = Read();
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_EQ(metrics->resource_completed, 2);
  EXPECT_THAT(source_->LastWarnings(), ElementsAre("partial response: store down"));
}

TEST_F(PrometheusApiSourceTest, SlowServerTimesOut) {
  prom_.SetDelay([] { std::this_thread::sleep_for(std::chrono::milliseconds(500)); });
  PrometheusApiSource source(prom_.url(), 0.2, clock_);
  auto start = std::chrono::steady_clock::now();
  StatusOr<TrialMetrics> metrics = source.Read("s", Segment(), "validation_accuracy");
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), StatusCode::kUnavailable);
  EXPECT_LT(elapsed, 0.45);
}

TEST_F(PrometheusApiSourceTest, LabelValuesAreEscapedInQueries) {
  PrometheusApiSource source(prom_.url(), 1.0, clock_);
  SegmentStatus segment;
  segment.trial = "t\"7\\";
  StatusOr<TrialMetrics> metrics = source.Read("s\n", segment, "acc");
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_EQ(prom_.queries().at(0),
            "budgetsweep_trainer_objective{sweep=\"s\\n\",trial=\"t\\\"7\\\\\",metric=\"acc\"}");
}

TEST(PrometheusApiSource, UnreachableIsUnavailable) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  close(fd);
  FakeClock clock{kNow};
  PrometheusApiSource source("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), 0.5,
                             clock);
  StatusOr<TrialMetrics> metrics = source.Read("s", Segment(), "acc");
  ASSERT_FALSE(metrics.ok());
  EXPECT_EQ(metrics.status().code(), StatusCode::kUnavailable);
}

// ---- Against the real Prometheus server (Debian's `prometheus`). ----

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), len);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Runs a process until destroyed, then stops it with SIGTERM and waits for it.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path) {
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log >= 0) {
        dup2(log, STDOUT_FILENO);
        dup2(log, STDERR_FILENO);
      }
      std::vector<char*> args;
      for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  ~ChildProcess() { Stop(); }
  bool running() const { return pid_ > 0; }
  // SIGTERM, then SIGKILL after 10 s; returns the wait status.
  int Stop() {
    if (pid_ <= 0) return 0;
    kill(pid_, SIGTERM);
    int status = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
    return status;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

TEST(PrometheusApiSourceRealServer, ReadsScrapedTrainerSeries) {
  const std::string binary = "/usr/bin/prometheus";
  if (access(binary.c_str(), X_OK) != 0) {
    if (std::getenv("CI") != nullptr) FAIL() << binary << " is missing in CI";
    GTEST_SKIP() << binary << " is missing (install Debian's prometheus: scripts/deps.sh)";
  }

  // The trainer's side: a prometheus-cpp exposer in this process.
  ::prometheus::Exposer exposer("127.0.0.1:0");
  auto registry = std::make_shared<::prometheus::Registry>();
  exposer.RegisterCollectable(registry);
  auto& objective = ::prometheus::BuildGauge()
                        .Name("budgetsweep_trainer_objective")
                        .Help("Objective at each evaluated resource.")
                        .Register(*registry);
  ::prometheus::Labels labels{{"sweep", "s"}, {"trial", "t7"}, {"metric", "validation_accuracy"}};
  labels["resource"] = "1";
  objective.Add(labels).Set(0.42);
  labels["resource"] = "3";
  objective.Add(labels).Set(0.61);
  labels["trial"] = "t8";  // another trial: never read as t7
  objective.Add(labels).Set(0.99);
  ::prometheus::BuildGauge()
      .Name("budgetsweep_trainer_resource_completed")
      .Help("Resource completed.")
      .Register(*registry)
      .Add({{"sweep", "s"}, {"trial", "t7"}})
      .Set(3);
  const int target_port = exposer.GetListeningPorts().at(0);

  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("bsw-prom-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    std::ofstream config(dir / "p.yml");
    config << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
           << "scrape_configs:\n  - job_name: trainer\n    static_configs:\n"
           << "      - targets: ['127.0.0.1:" << target_port << "']\n";
  }
  const int port = FreePort();
  ChildProcess prometheus({binary, "--config.file=" + (dir / "p.yml").string(),
                           "--storage.tsdb.path=" + (dir / "data").string(),
                           "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                          (dir / "prometheus.log").string());
  ASSERT_TRUE(prometheus.running());

  SystemClock clock;
  PrometheusApiSource source("http://127.0.0.1:" + std::to_string(port), 2.0, clock);
  StatusOr<TrialMetrics> metrics = UnavailableError("not read yet");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    metrics = source.Read("s", Segment(), "validation_accuracy");
    if (metrics.ok() && metrics->objective_by_resource.size() == 2 &&
        metrics->resource_completed.has_value()) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  EXPECT_THAT(metrics->objective_by_resource, ElementsAre(Pair(1.0, 0.42), Pair(3.0, 0.61)));
  EXPECT_EQ(metrics->resource_completed, 3);
  EXPECT_FALSE(metrics->loss.has_value());  // never exposed: Unknown
  const std::vector<QueryRecord>& records = source.LastQueries();
  ASSERT_EQ(records.size(), 7u);
  EXPECT_GE(records[0].sample_age_seconds, -1.0);
  EXPECT_LT(records[0].sample_age_seconds, 10.0);
  EXPECT_LT(records[1].sample_age_seconds, 10.0);
  EXPECT_NEAR(records[0].evaluated_at, clock.NowUnixSeconds(), 30.0);

  // The explicit time is what Prometheus evaluates at: an hour ago, nothing was scraped yet.
  FakeClock past(clock.NowUnixSeconds() - 3600);
  PrometheusApiSource past_source("http://127.0.0.1:" + std::to_string(port), 2.0, past);
  StatusOr<TrialMetrics> before = past_source.Read("s", Segment(), "validation_accuracy");
  ASSERT_TRUE(before.ok()) << before.status().message();
  EXPECT_TRUE(before->objective_by_resource.empty());
  EXPECT_FALSE(before->resource_completed.has_value());

  const pid_t pid = prometheus.pid();
  int status = prometheus.Stop();
  EXPECT_TRUE(WIFEXITED(status)) << "Prometheus did not exit on SIGTERM";
  EXPECT_NE(kill(pid, 0), 0);  // no process left
  exposer.RemoveCollectable(registry);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace bsw::prom
