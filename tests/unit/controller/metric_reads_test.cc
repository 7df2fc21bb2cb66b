#include "operator/controller/metric_reads.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "operator/adapters/prometheus/scrape_source.h"
#include "operator/adapters/system_clock.h"
#include "tests/mocks/fake_clock.h"

namespace bsw {
namespace {

constexpr char kObjective[] = "validation_accuracy";

SegmentStatus Running(const std::string& trial, int segment, const std::string& metrics_url = "") {
  SegmentStatus s;
  s.trial = trial;
  s.segment = segment;
  s.state = SegmentState::kRunning;
  s.metrics_url = metrics_url;
  return s;
}

// A source whose reads of held trials wait until Release; the others answer at once.
// A read answers resource_completed = 10 * segment + how many reads of the segment had started.
// Counts reads in flight.
class GatedSource final : public MetricSource {
 public:
  explicit GatedSource(std::set<std::string> held = {}) : held_(std::move(held)) {}

  StatusOr<TrialMetrics> Read(const std::string&, const SegmentStatus& segment,
                              const std::string&) override {
    std::unique_lock<std::mutex> lock(mu_);
    ++in_flight_;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    ++started_;
    const int reads_of_segment = ++reads_by_segment_[segment.segment];
    changed_.notify_all();
    changed_.wait(lock, [&] { return !held_.contains(segment.trial); });
    --in_flight_;
    changed_.notify_all();
    if (failing_.contains(segment.trial)) return InvalidArgumentError("refused at a cap");
    TrialMetrics metrics;
    metrics.resource_completed = 10 * segment.segment + reads_of_segment;
    return metrics;
  }

  // Reads of `trial` fail (once released).
  void Fail(const std::string& trial) {
    std::lock_guard<std::mutex> lock(mu_);
    failing_.insert(trial);
  }
  void Heal(const std::string& trial) {
    std::lock_guard<std::mutex> lock(mu_);
    failing_.erase(trial);
  }
  void Hold(const std::string& trial) {
    std::lock_guard<std::mutex> lock(mu_);
    held_.insert(trial);
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    held_.clear();
    changed_.notify_all();
  }
  void AwaitStarted(int count) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return started_ >= count; });
  }
  int started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  int max_in_flight() {
    std::lock_guard<std::mutex> lock(mu_);
    return max_in_flight_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::set<std::string> held_;
  std::set<std::string> failing_;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
  int started_ = 0;
  std::map<int, int> reads_by_segment_;
};

TEST(MetricReader, ReadsEverySegmentAndAnswersInOrder) {
  FakeClock clock;
  GatedSource source;
  MetricReader reader(&source, &clock);
  std::vector<StatusOr<TrialMetrics>> read =
      reader.ReadAll("s", {Running("a", 0), Running("b", 1), Running("c", 2)}, kObjective);
  ASSERT_EQ(read.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(read[i].ok()) << read[i].status().message();
    EXPECT_EQ(read[i]->resource_completed, 10 * i + 1);
  }
}

TEST(MetricReader, NeverRunsMoreReadsAtOnceThanItsBound) {
  FakeClock clock;
  std::vector<SegmentStatus> segments;
  std::set<std::string> all;
  for (int i = 0; i < 10; ++i) {
    segments.push_back(Running("t" + std::to_string(i), i));
    all.insert(segments.back().trial);
  }
  GatedSource source(all);
  MetricReadOptions options;
  options.max_in_flight = 3;
  MetricReader reader(&source, &clock, options);
  auto read =
      std::async(std::launch::async, [&] { return reader.ReadAll("s", segments, kObjective); });
  source.AwaitStarted(3);
  source.Release();
  std::vector<StatusOr<TrialMetrics>> results = read.get();
  for (const StatusOr<TrialMetrics>& m : results) EXPECT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(source.started(), 10);
  EXPECT_EQ(source.max_in_flight(), 3);
}

TEST(MetricReader, ASegmentsFirstReadIsWaitedForOnlyTheFirstReadDeadline) {
  FakeClock clock;
  GatedSource source({"hung"});
  MetricReadOptions options;
  options.deadline_seconds = 0.25;
  options.first_read_deadline_seconds = 0.02;
  MetricReader reader(&source, &clock, options);
  auto pass = std::async(std::launch::async,
                         [&] { return reader.ReadAll("s", {Running("hung", 0)}, kObjective); });
  source.AwaitStarted(1);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(0.021);
  StatusOr<TrialMetrics> hung = pass.get()[0];
  EXPECT_NE(hung.status().message().find("no answer within 0.02 s"), std::string::npos)
      << hung.status().message();
  source.Release();
}

TEST(MetricReader, AHungReadCostsOneDeadlineOnceAndItsLateAnswerIsHandedOnLater) {
  FakeClock clock;
  GatedSource source;
  MetricReadOptions options;
  options.deadline_seconds = 0.25;
  options.first_read_deadline_seconds = 0.02;
  MetricReader reader(&source, &clock, options);
  ASSERT_TRUE(reader.ReadAll("s", {Running("a", 0)}, kObjective)[0].ok());  // a is proven

  // a hangs: the pass waits for it the whole deadline, and no longer.
  clock.Advance(1.1);  // past the backoff of a refused answer: a read starts, and hangs
  source.Hold("a");
  auto pass = std::async(std::launch::async,
                         [&] { return reader.ReadAll("s", {Running("a", 0)}, kObjective); });
  source.AwaitStarted(2);
  ASSERT_TRUE(clock.AwaitWaiters(1));
  clock.Advance(0.021);
  ASSERT_TRUE(clock.AwaitWaiters(1)) << "a proven segment is waited for the whole deadline";
  clock.Advance(0.24);
  StatusOr<TrialMetrics> a = pass.get()[0];
  EXPECT_EQ(a.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(a.status().message().find("no answer within 0.25 s"), std::string::npos)
      << a.status().message();

  // While its read still runs, a is neither read again nor waited for: the next pass reads b and
  // returns without the clock moving.
  std::vector<StatusOr<TrialMetrics>> read =
      reader.ReadAll("s", {Running("a", 0), Running("b", 1)}, kObjective);
  EXPECT_NE(read[0].status().message().find("no answer yet"), std::string::npos)
      << read[0].status().message();
  EXPECT_TRUE(read[1].ok());
  EXPECT_EQ(source.started(), 3);

  // Once it has answered, a pass hands its answer out (passes until then find it still running).
  source.Release();
  do {
    a = reader.ReadAll("s", {Running("a", 0)}, kObjective)[0];
  } while (!a.ok());
  EXPECT_EQ(a->resource_completed, 2);  // the second read of a: the one that hung
  EXPECT_EQ(source.started(), 3);

  // Slow now, a is read again but not waited for; b, proven, is.
  source.Hold("a");
  read = reader.ReadAll("s", {Running("a", 0), Running("b", 1)}, kObjective);
  EXPECT_EQ(read[0].status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(read[1].ok());
  source.AwaitStarted(5);  // a's read, which nothing waited for
  EXPECT_EQ(source.started(), 5);
  source.Release();
}

// Issue 40: hostile endpoints refused fast at a cap counted as answering in time, so every pass
// waited the whole deadline for their next read.
TEST(MetricReader, AReadThatFailedIsNotWaitedForOnTheNextPass) {
  FakeClock clock;
  GatedSource source;
  source.Fail("a");
  MetricReader reader(&source, &clock, MetricReadOptions{});
  EXPECT_FALSE(reader.ReadAll("s", {Running("a", 0)}, kObjective)[0].ok());

  clock.Advance(1.1);  // past the backoff of a refused answer: a read starts, and hangs
  source.Hold("a");
  auto pass = std::async(std::launch::async,
                         [&] { return reader.ReadAll("s", {Running("a", 0)}, kObjective); });
  ASSERT_EQ(pass.wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "the pass waited for a segment whose last read failed";
  Status missed = pass.get()[0].status();
  EXPECT_EQ(missed.code(), StatusCode::kUnavailable);
  // The pass says why the endpoint was not waited for: its last read's error is not lost.
  EXPECT_THAT(missed.message(), ::testing::HasSubstr("(its last read failed: refused at a cap)"));
  source.Release();
}

// The first result of `read` that is not the "no answer yet" of a read still in flight: such a
// pass starts nothing and changes nothing, so asking again until the worker has handed the answer
// over is the way to wait for a read that no pass waits for. Fails after 10 s of real time.
StatusOr<TrialMetrics> LateAnswer(const std::function<StatusOr<TrialMetrics>()>& read) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  StatusOr<TrialMetrics> result = read();
  while (!result.ok() && result.status().message().find("no answer yet") != std::string::npos &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
    result = read();
  }
  return result;
}

TEST(MetricReader, AnEndpointWhoseAnswerWasRefusedIsReadAgainOnlyAfterABackoffThatDoubles) {
  FakeClock clock;
  GatedSource source;
  source.Fail("a");
  MetricReader reader(&source, &clock, MetricReadOptions{});
  auto read = [&] { return reader.ReadAll("s", {Running("a", 0)}, kObjective)[0]; };
  EXPECT_EQ(read().status().code(), StatusCode::kInvalidArgument);

  // Within a second of the refusal no read starts, and the pass says why.
  clock.Advance(0.9);
  Status held = read().status();
  EXPECT_EQ(held.code(), StatusCode::kUnavailable);
  EXPECT_THAT(held.message(), ::testing::HasSubstr("not read again yet"));
  EXPECT_THAT(held.message(), ::testing::HasSubstr("refused at a cap"));
  EXPECT_EQ(source.started(), 1);

  // After it, a read starts (not waited for: the segment's last read failed) and is refused again.
  clock.Advance(0.2);
  EXPECT_FALSE(read().ok());
  EXPECT_EQ(LateAnswer(read).status().code(), StatusCode::kInvalidArgument);
  // The second refusal in a row holds it for two seconds.
  clock.Advance(1.5);
  EXPECT_THAT(read().status().message(), ::testing::HasSubstr("not read again yet"));
  EXPECT_EQ(source.started(), 2);
  clock.Advance(0.6);
  source.Heal("a");
  EXPECT_FALSE(read().ok());
  EXPECT_TRUE(LateAnswer(read).ok());
  // A read that gave metrics ends the backoff: the next pass reads, and waits for it.
  EXPECT_TRUE(read().ok());
  EXPECT_EQ(source.started(), 4);
}

// An endpoint that hangs: it never accepts, but the kernel completes the handshakes (the listen
// backlog), so a client connects and then waits for an answer that never comes.
class HungServer {
 public:
  HungServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), len), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
  }
  // Closing the socket resets the connections waiting on it: the reads that hang on them end.
  ~HungServer() { close(fd_); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(MetricReader, HungHttpEndpointsCostOneDeadlineAndTheOthersAreRead) {
  httplib::Server trainer;
  trainer.Get("/metrics", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("budgetsweep_trainer_resource_completed 3\n", "text/plain");
  });
  int port = trainer.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { trainer.listen_after_bind(); });
  while (!trainer.is_running()) std::this_thread::yield();
  const std::string healthy = "http://127.0.0.1:" + std::to_string(port) + "/metrics";

  // A scrape timeout far past the reader's deadline: only the deadline can end the pass early.
  prom::ScrapeMetricSource source(/*timeout_seconds=*/60);
  MetricReadOptions options;
  options.deadline_seconds = 1;
  options.first_read_deadline_seconds = 1;
  MetricReader reader(&source, &SystemClock::Get(), options);
  HungServer hung_a;  // destroyed before the reader, which waits for the reads hanging on it
  HungServer hung_b;
  std::vector<SegmentStatus> segments = {Running("t0", 0, healthy), Running("t1", 0, hung_a.url()),
                                         Running("t2", 0, healthy), Running("t3", 0, hung_b.url()),
                                         Running("t4", 0, healthy)};
  std::vector<StatusOr<TrialMetrics>> read = reader.ReadAll("s", segments, kObjective);
  ASSERT_EQ(read.size(), 5u);
  for (int i : {0, 2, 4}) {
    ASSERT_TRUE(read[i].ok()) << read[i].status().message();
    EXPECT_EQ(read[i]->resource_completed, 3);
  }
  for (int i : {1, 3}) {
    EXPECT_NE(read[i].status().message().find("no answer within 1 s"), std::string::npos)
        << read[i].status().message();
  }
  trainer.stop();
  serving.join();
}

}  // namespace
}  // namespace bsw
