// Stop-mode ASHA decisions per second on a recorded report stream.
//
//   scheduler_bench --generate DIR     writes DIR/stream-{1000,10000,100000}.txt
//   scheduler_bench --streams DIR [Google Benchmark flags]
//
// A stream line is "trial rung value continue": trial `trial` reports `value` at rung `rung`
// (resources 1, 3, 9 with η = 3). The generator runs 32 asynchronous workers over a seeded
// synthetic learning curve and lets a trial report at the next rung only while stop-mode ASHA
// keeps it; `continue` is that decision, so the Optuna side can check that it agrees.
// Reported: decisions_per_second (ns per decision is its inverse) and agreement with the stream.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "operator/core/asha.h"
#include "operator/core/random.h"

namespace bsw {
namespace {

constexpr int kReductionFactor = 3;
constexpr int kDecisionRungs = 3;  // rungs at 1, 3 and 9 epochs; 27 is the end
constexpr double kRungResource[] = {1, 3, 9};
constexpr int kWorkers = 32;
constexpr uint64_t kSeed = 20240601;
constexpr int64_t kSizes[] = {1000, 10000, 100000};

struct Report {
  int64_t trial;
  int rung;
  double value;
  bool keep;
};

// The objective of `trial` after `resource` epochs: a per-trial ceiling, a saturating curve, noise.
double Objective(int64_t trial, double resource) {
  Random q(MixSeed(kSeed, static_cast<uint64_t>(trial)));
  double ceiling = 0.7 + 0.25 * q.Uniform();
  double speed = 2 + 6 * q.Uniform();
  Random noise(
      MixSeed(kSeed + 1, static_cast<uint64_t>(trial) * 64 + static_cast<uint64_t>(resource)));
  return ceiling - 0.5 * std::exp(-resource / speed) + 0.01 * (noise.Uniform() - 0.5);
}

std::vector<Report> Generate(int64_t trials) {
  struct Pending {
    double at;
    int64_t trial;
    int rung;
    bool operator>(const Pending& o) const { return at != o.at ? at > o.at : trial > o.trial; }
  };
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> queue;
  std::vector<double> seconds_per_epoch;
  AshaScheduler asha(kDecisionRungs, kReductionFactor, Goal::kMaximize, AshaMode::kStop);
  int64_t next = 0;
  auto start = [&](double now) {
    Random pace(MixSeed(kSeed + 2, static_cast<uint64_t>(next)));
    seconds_per_epoch.push_back(20 + 40 * pace.Uniform());
    queue.push({now + seconds_per_epoch.back() * kRungResource[0], next, 0});
    ++next;
  };
  for (int w = 0; w < kWorkers && next < trials; ++w) start(0);
  std::vector<Report> out;
  while (!queue.empty()) {
    Pending p = queue.top();
    queue.pop();
    double value = Objective(p.trial, kRungResource[p.rung]);
    bool keep = asha.Record(p.trial, p.rung, value);
    out.push_back({p.trial, p.rung, value, keep});
    if (keep && p.rung + 1 < kDecisionRungs) {
      double epochs = kRungResource[p.rung + 1] - kRungResource[p.rung];
      queue.push(
          {p.at + epochs * seconds_per_epoch[static_cast<size_t>(p.trial)], p.trial, p.rung + 1});
    } else if (next < trials) {
      start(p.at);
    }
  }
  return out;
}

std::string StreamPath(const std::string& dir, int64_t trials) {
  return dir + "/stream-" + std::to_string(trials) + ".txt";
}

int WriteStreams(const std::string& dir) {
  for (int64_t n : kSizes) {
    std::FILE* f = std::fopen(StreamPath(dir, n).c_str(), "w");
    if (f == nullptr) {
      std::perror(StreamPath(dir, n).c_str());
      return 1;
    }
    for (const Report& r : Generate(n)) {
      std::fprintf(f, "%lld %d %.17g %d\n", static_cast<long long>(r.trial), r.rung, r.value,
                   r.keep ? 1 : 0);
    }
    std::fclose(f);
  }
  return 0;
}

std::vector<Report> ReadStream(const std::string& path) {
  std::vector<Report> out;
  std::ifstream in(path);
  Report r{};
  int keep = 0;
  while (in >> r.trial >> r.rung >> r.value >> keep) {
    r.keep = keep != 0;
    out.push_back(r);
  }
  return out;
}

// One iteration replays the whole stream into a fresh scheduler: every report is one decision.
void BM_AshaStopDecisions(benchmark::State& state, std::vector<Report> stream) {
  int64_t agree = 0;
  for (auto _ : state) {
    auto asha = std::make_unique<AshaScheduler>(kDecisionRungs, kReductionFactor, Goal::kMaximize);
    agree = 0;
    for (const Report& r : stream) agree += asha->Record(r.trial, r.rung, r.value) == r.keep;
    benchmark::DoNotOptimize(agree);
    state.PauseTiming();  // tearing the scheduler down is no decision
    asha.reset();
    state.ResumeTiming();
  }
  const auto decisions = static_cast<double>(stream.size());
  state.counters["decisions"] = decisions;
  state.counters["decisions_per_second"] = benchmark::Counter(
      decisions * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["agreement"] = static_cast<double>(agree) / decisions;
}

}  // namespace
}  // namespace bsw

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string streams;
  for (int i = 1; i + 1 < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--generate") return bsw::WriteStreams(argv[i + 1]);
    if (flag == "--streams") streams = argv[i + 1];
  }
  if (streams.empty()) {
    std::cerr << "usage: scheduler_bench --generate DIR | --streams DIR [benchmark flags]\n";
    return 2;
  }
  for (int64_t n : bsw::kSizes) {
    std::vector<bsw::Report> stream = bsw::ReadStream(bsw::StreamPath(streams, n));
    if (stream.empty()) {
      std::cerr << "no stream at " << bsw::StreamPath(streams, n) << "\n";
      return 1;
    }
    benchmark::RegisterBenchmark(("AshaStopDecisions/trials:" + std::to_string(n)).c_str(),
                                 bsw::BM_AshaStopDecisions, std::move(stream))
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
