// Kill latency with misbehaving metric endpoints, no cluster: a stop-mode ASHA sweep driven
// through SweepController against an in-process backend whose trials expose their metrics over
// real HTTP on 127.0.0.1. A share of the trials' endpoints misbehave (--misbehaving):
//   hung     they accept the connection and never answer;
//   hostile  they serve, in turn, a gzip bomb (1 MiB that inflates to 1 GiB), a 200 MiB body and
//            a flood of 20,000 label sets (issue 40: the scrape's caps bound what they cost).
// Kill latency is the time from a trial's rung value becoming visible at its endpoint to the
// controller asking the backend to stop it (a RungCutoff, decided in stop mode when the value
// arrives). The same sweep runs with and without misbehaving endpoints (--only runs one of the
// two, so that each process's peak RSS is its own).
//
//   hung_metrics_bench --trials=100 --parallelism=10 --hung-percent=10 --repeats=3
//   hung_metrics_bench --misbehaving=hostile --only=misbehaving --repeats=1
//
// Prints one JSON object: per mode run, the kill latencies (each, and their count, p50, p99 and
// max, in seconds) and the passes' count and p50 / p99 / max duration; and the process's peak
// RSS (KiB).
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "contract/trainer_contract.h"
#include "operator/adapters/prometheus/scrape_source.h"
#include "operator/adapters/system_clock.h"
#include "operator/controller/sweep_controller.h"
#include "operator/core/api.h"
#include "operator/ports/event_log.h"
#include "tests/fixtures/curve-trainer/hostile_answers.h"

namespace bsw {
namespace {

struct BenchOptions {
  int trials = 100;
  int parallelism = 10;
  int hung_percent = 10;
  std::string misbehaving = "hung";  // or "hostile"
  std::string only;                  // "clean" or "misbehaving"; both when empty
  double epoch_seconds = 0.2;
  double poll_seconds = 0.1;
  int repeats = 3;
};

// The journal, in memory.
class MemoryLog final : public EventLog {
 public:
  StatusOr<std::vector<Event>> ReadAll() override { return events_; }
  Status Append(const std::vector<Event>& events) override {
    events_.insert(events_.end(), events.begin(), events.end());
    return OkStatus();
  }
  std::string Describe() const override { return "memory"; }

 private:
  std::vector<Event> events_;
};

// A socket listening on 127.0.0.1 at a port the kernel picks (stored in *port), with a backlog
// deep enough for every connect of a pass; exits naming `what` if that fails.
int ListenOnLoopback(const char* what, int* port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd, 4096) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror(what);
    std::exit(1);
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

// Serves GET /<trial>/metrics on 127.0.0.1, one connection at a time, answering with
// `exposition(trial)` and closing. (Not cpp-httplib's server: its listen backlog of 5 drops the
// concurrent connects a pass makes to this one shared port, where each real trainer has its own,
// and the dropped ones wait a 1 s SYN retry.)
class MetricsServer {
 public:
  explicit MetricsServer(std::function<std::string(const std::string&)> exposition)
      : exposition_(std::move(exposition)) {
    fd_ = ListenOnLoopback("metrics server", &port_);
    serving_ = std::thread([this] { Serve(); });
  }
  ~MetricsServer() {
    shutdown(fd_, SHUT_RDWR);  // ends the accept
    serving_.join();
    close(fd_);
  }
  int port() const { return port_; }

 private:
  void Serve() {
    while (true) {
      int connection = accept(fd_, nullptr, nullptr);
      if (connection < 0) return;
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t got = recv(connection, buffer, sizeof buffer, 0);
        if (got <= 0) break;
        request.append(buffer, static_cast<size_t>(got));
      }
      // "GET /<trial>/metrics HTTP/1.1"
      size_t start = request.find(" /");
      size_t end = request.find("/metrics", start == std::string::npos ? 0 : start);
      std::string body = start != std::string::npos && end != std::string::npos
                             ? exposition_(request.substr(start + 2, end - start - 2))
                             : std::string();
      std::string response =
          "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
      hostile::SendAll(connection, response.data(), response.size());
      close(connection);
    }
  }

  const std::function<std::string(const std::string&)> exposition_;
  int fd_ = -1;
  int port_ = 0;
  std::thread serving_;
};

// An endpoint that hangs: it never accepts, but the kernel completes the handshakes (the listen
// backlog), so a scrape connects and then waits for an answer that never comes.
class HungEndpoint {
 public:
  HungEndpoint() { fd_ = ListenOnLoopback("hung endpoint", &port_); }
  ~HungEndpoint() { close(fd_); }
  std::string Url(const std::string& trial) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + trial + "/metrics";
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// An endpoint of hostile trainers: each request gets, in turn, a gzip bomb, a 200 MiB body (sent
// until the reader stops reading) or a flood of label sets, one connection at a time.
class HostileEndpoint {
 public:
  HostileEndpoint()
      : bomb_(hostile::GzipBomb(size_t{1} << 30)), flood_(hostile::LabelFlood("", 20000)) {
    fd_ = ListenOnLoopback("hostile endpoint", &port_);
    serving_ = std::thread([this] { Serve(); });
  }
  ~HostileEndpoint() {
    shutdown(fd_, SHUT_RDWR);
    serving_.join();
    close(fd_);
  }
  std::string Url(const std::string& trial) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + trial + "/metrics";
  }

 private:
  void Serve() {
    for (int request = 0;; ++request) {
      int connection = accept(fd_, nullptr, nullptr);
      if (connection < 0) return;
      char buffer[4096];
      ssize_t ignored = recv(connection, buffer, sizeof buffer, 0);  // the request; not read
      (void)ignored;
      constexpr hostile::Kind kKinds[] = {hostile::Kind::kGzipBomb, hostile::Kind::kBigBody,
                                          hostile::Kind::kLabelFlood};
      const hostile::Kind kind = kKinds[request % 3];
      hostile::Answer(connection, kind, kind == hostile::Kind::kGzipBomb ? bomb_ : flood_);
      close(connection);
    }
  }

  const std::string bomb_;
  const std::string flood_;
  int fd_ = -1;
  int port_ = 0;
  std::thread serving_;
};

// Trials as simulated trainers: a segment loads for up to half a second, then trains one epoch
// every `epoch_seconds` of real time, to its until_resource, and exposes its values at
// /<trial>/metrics over real HTTP. (The loading time keeps rung crossings from lining up
// with the controller's passes.) A trial's quality is fixed by its number, so the ranking ASHA sees
// is the same in every run. Every `hung_every`-th trial's metrics URL points at a misbehaving
// endpoint (options.misbehaving).
class SimulatedTrials final : public TrialBackend {
 public:
  SimulatedTrials(const BenchOptions& options, int hung_every)
      : options_(options),
        hung_every_(hung_every),
        server_([this](const std::string& trial) { return Exposition(trial); }) {
    if (options.misbehaving == "hostile") hostile_.emplace();
  }

  Status Start(const SegmentSpec& spec) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (segments_.contains(spec.trial)) return OkStatus();
    Segment& s = segments_[spec.trial];
    s.number = static_cast<int>(segments_.size());
    s.started = Now();
    s.training_from = s.started + 0.5 * std::fmod(s.number * 0.7548776662466927, 1.0);
    s.until = spec.until_resource;
    s.devices = spec.devices;
    s.deadline = spec.deadline_unix_seconds;
    const std::string misbehaving = hostile_ ? hostile_->Url(spec.trial) : hung_.Url(spec.trial);
    s.url = s.number % hung_every_ == 0 ? misbehaving
                                        : "http://127.0.0.1:" + std::to_string(server_.port()) +
                                              "/" + spec.trial + "/metrics";
    return OkStatus();
  }

  Status Stop(const std::string& trial, int) override {
    std::lock_guard<std::mutex> lock(mu_);
    Segment& s = segments_.at(trial);
    if (!s.stopped) s.stopped = Now();
    return OkStatus();
  }

  Status SetDeadline(const std::string& trial, int, double deadline) override {
    std::lock_guard<std::mutex> lock(mu_);
    segments_.at(trial).deadline = deadline;
    return OkStatus();
  }

  StatusOr<std::vector<SegmentStatus>> List() override {
    std::lock_guard<std::mutex> lock(mu_);
    const double now = Now();
    std::vector<SegmentStatus> out;
    for (const auto& [trial, s] : segments_) {
      SegmentStatus st;
      st.trial = trial;
      st.devices = s.devices;
      st.deadline_unix_seconds = s.deadline;
      st.started_unix_seconds = s.started;
      st.metrics_url = s.url;
      const double done_at = s.training_from + s.until * options_.epoch_seconds;
      if (s.stopped) {
        st.state = SegmentState::kFailed;
        st.reason = Reason::kStopped;
        st.finished_unix_seconds = s.stopped;
        st.exit_code = 143;
      } else if (now >= done_at) {
        st.state = SegmentState::kSucceeded;
        st.finished_unix_seconds = done_at;
        st.exit_code = 0;
      } else {
        st.state = SegmentState::kRunning;
      }
      out.push_back(std::move(st));
    }
    return out;
  }

  Status ReleaseCharge(const std::string&, int) override { return OkStatus(); }

  // From the moment the trial's value at `resource` was exposed to the stop being asked.
  double KillLatency(const std::string& trial, double resource) {
    std::lock_guard<std::mutex> lock(mu_);
    const Segment& s = segments_.at(trial);
    return s.stopped.value() - (s.training_from + resource * options_.epoch_seconds);
  }

 private:
  struct Segment {
    int number = 0;
    double started = 0;
    double training_from = 0;
    double until = 0;
    int devices = 0;
    double deadline = 0;
    std::string url;
    std::optional<double> stopped;
  };

  static double Now() { return SystemClock::Get().NowUnixSeconds(); }

  double EpochsAt(const Segment& s, double at) const {
    return std::clamp(std::floor((at - s.training_from) / options_.epoch_seconds), 0.0, s.until);
  }

  std::string Exposition(const std::string& trial) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = segments_.find(trial);
    if (it == segments_.end()) return "";
    const Segment& s = it->second;
    const double epochs = EpochsAt(s, s.stopped.value_or(Now()));
    // Quality in [0.5, 0.95), spread by the trial's number; it grows with the epochs.
    const double quality = 0.5 + 0.45 * std::fmod(s.number * 0.618033988749895, 1.0);
    std::string labels =
        std::string(kLabelSweep) + "=\"bench\"," + kLabelTrial + "=\"" + trial + "\"";
    std::string text =
        std::string(kMetricResourceCompleted) + "{" + labels + "} " + std::to_string(epochs) + "\n";
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      text += std::string(kMetricObjective) + "{" + labels + "," + kLabelMetric +
              "=\"validation_accuracy\"," + kLabelResource + "=\"" + std::to_string(epoch) +
              "\"} " + std::to_string(quality * (1 - 0.3 / epoch)) + "\n";
    }
    return text;
  }

  const BenchOptions options_;
  const int hung_every_;
  HungEndpoint hung_;
  std::optional<HostileEndpoint> hostile_;
  std::mutex mu_;
  std::map<std::string, Segment> segments_;
  MetricsServer server_;  // last: it calls Exposition until it is destroyed
};

SweepSpec BenchSpec(const BenchOptions& options) {
  nlohmann::json sweep = nlohmann::json::parse(R"({
    "apiVersion": "budgetsweep.dev/v1alpha1",
    "kind": "BudgetSweep",
    "metadata": {"name": "bench"},
    "spec": {
      "budget": {"gpuHours": 1000},
      "objective": {"metric": "validation_accuracy", "goal": "maximize"},
      "resource": {"unit": "epochs", "min": 1, "max": 27, "reductionFactor": 3},
      "scheduler": {"algorithm": "asha", "mode": "stop", "seed": 7},
      "throughput": {"enabled": false},
      "searchSpace": {"lr": {"type": "logUniform", "min": 1.0e-4, "max": 1.0e-1}},
      "trial": {"gpus": 1, "template": {"spec": {"containers": [
        {"name": "trainer", "image": "bench", "command": ["trainer"]}]}}}
    }
  })");
  sweep["spec"]["parallelism"] = options.parallelism;
  sweep["spec"]["maxTrials"] = options.trials;
  // Misbehaving trials end without values (ExitedShort, failed): the sweep goes on past them.
  sweep["spec"]["maxFailedTrials"] = options.trials;
  StatusOr<SweepSpec> spec = ParseSweep(sweep);
  if (!spec.ok()) {
    std::fprintf(stderr, "bench spec: %s\n", spec.status().message().c_str());
    std::exit(1);
  }
  return *spec;
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size()))) - 1;
  return values[std::min(index, values.size() - 1)];
}

nlohmann::json Summary(const std::vector<double>& values) {
  return {{"n", values.size()},
          {"p50", Quantile(values, 0.50)},
          {"p99", Quantile(values, 0.99)},
          {"max", Quantile(values, 1.0)}};
}

struct Samples {
  std::vector<double> kills;
  std::vector<double> passes;
};

// Runs the sweep to its end once, adding its kill latencies and pass durations to `samples`.
void RunOnce(const BenchOptions& options, int hung_every, Samples& samples) {
  const SweepSpec spec = BenchSpec(options);
  std::vector<double>& kills = samples.kills;
  std::vector<double>& passes = samples.passes;
  {
    SimulatedTrials trials(options, hung_every);
    prom::ScrapeMetricSource metrics;  // the production default: a 2 s scrape timeout
    MemoryLog log;
    SweepController controller(spec, &trials, &metrics, &log, &SystemClock::Get());
    if (Status s = controller.Recover(); !s.ok()) std::exit(1);
    const SystemClock& clock = SystemClock::Get();
    while (true) {
      const double started = clock.MonotonicSeconds();
      StatusOr<Step> plan = controller.Pass();
      passes.push_back(clock.MonotonicSeconds() - started);
      if (!plan.ok()) {
        std::fprintf(stderr, "pass: %s\n", plan.status().message().c_str());
        std::exit(1);
      }
      if (controller.model().finished()) {
        StatusOr<bool> ended = controller.AllSegmentsEnded();
        if (ended.ok() && *ended) break;
      }
      clock.SleepFor(options.poll_seconds);
    }
    const SweepModel& model = controller.model();
    for (int64_t i = 0; i < model.trial_count(); ++i) {
      const Trial& t = model.trial(i);
      // Cut at the rung it had reached, decided when that value arrived (stop mode).
      if (t.reason == "RungCutoff") kills.push_back(trials.KillLatency(t.name, t.progress()));
    }
  }
}

int Main(int argc, char** argv) {
  BenchOptions options;
  const std::map<std::string, double*> doubles = {{"--epoch-seconds", &options.epoch_seconds},
                                                  {"--poll-seconds", &options.poll_seconds}};
  const std::map<std::string, int*> ints = {{"--trials", &options.trials},
                                            {"--parallelism", &options.parallelism},
                                            {"--hung-percent", &options.hung_percent},
                                            {"--repeats", &options.repeats}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t equals = arg.find('=');
    std::string name = arg.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : arg.substr(equals + 1);
    if (name == "--misbehaving" || name == "--only") {
      (name == "--only" ? options.only : options.misbehaving) = value;
    } else if (auto d = doubles.find(name); d != doubles.end() && !value.empty()) {
      *d->second = std::atof(value.c_str());
    } else if (auto n = ints.find(name); n != ints.end() && !value.empty()) {
      *n->second = std::atoi(value.c_str());
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (options.hung_percent <= 0 || 100 % options.hung_percent != 0) {
    std::fprintf(stderr, "--hung-percent must divide 100\n");
    return 2;
  }
  if (options.misbehaving != "hung" && options.misbehaving != "hostile") {
    std::fprintf(stderr, "--misbehaving must be hung or hostile\n");
    return 2;
  }
  // The two modes take turns, so that the machine's background load falls on both alike.
  Samples clean;
  Samples hung;
  for (int repeat = 0; repeat < options.repeats; ++repeat) {
    if (options.only != "misbehaving") RunOnce(options, /*hung_every=*/options.trials + 1, clean);
    if (options.only != "clean") RunOnce(options, /*hung_every=*/100 / options.hung_percent, hung);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto summary = [](const Samples& samples) {
    return nlohmann::json{{"kill_latency_seconds", Summary(samples.kills)},
                          {"kills", samples.kills},
                          {"pass_seconds", Summary(samples.passes)}};
  };
  nlohmann::json result = {{"options",
                            {{"trials", options.trials},
                             {"parallelism", options.parallelism},
                             {"hung_percent", options.hung_percent},
                             {"misbehaving", options.misbehaving},
                             {"epoch_seconds", options.epoch_seconds},
                             {"poll_seconds", options.poll_seconds},
                             {"repeats", options.repeats}}},
                           {"max_rss_kib", usage.ru_maxrss}};
  if (options.only != "misbehaving") result["clean"] = summary(clean);
  if (options.only != "clean") result["hung"] = summary(hung);
  std::printf("%s\n", result.dump(2).c_str());
  return 0;
}

}  // namespace
}  // namespace bsw

int main(int argc, char** argv) { return bsw::Main(argc, argv); }
