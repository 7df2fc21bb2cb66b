// Records a journaled sweep in a cluster's API server as the operator would have recorded it
// while running it: the events through kube::TrialLog (one BudgetSweepTrial object per trial, the
// sweep's own events in its status), then the sweep's status as the operator publishes it. No pod
// is created. The BudgetSweep object must exist, with the journal's spec.
//
//   replay_sweep --namespace=NS --sweep=NAME --journal=DIR/journal.jsonl [--events=N]
//
// --events=N records only the journal's first N events: the prefix a crash would leave. The
// kubeconfig is $KUBECONFIG. Prints one JSON object: what was written and how long it took.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "operator/adapters/kube/client.h"
#include "operator/adapters/kube/config.h"
#include "operator/adapters/kube/resources.h"
#include "operator/adapters/kube/trial_log.h"
#include "operator/controller/journal.h"
#include "operator/core/api.h"
#include "operator/core/recorded_charges.h"
#include "operator/core/sweep_model.h"
#include "operator/core/sweep_status.h"

namespace bsw {
namespace {

int Fail(const std::string& what, const Status& status) {
  std::fprintf(stderr, "replay_sweep: %s: %s\n", what.c_str(), status.message().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  std::string ns, name, journal_path;
  long long limit = -1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    size_t equals = arg.find('=');
    std::string flag = arg.substr(0, equals);
    std::string value = equals == std::string::npos ? "" : arg.substr(equals + 1);
    if (flag == "--namespace") {
      ns = value;
    } else if (flag == "--sweep") {
      name = value;
    } else if (flag == "--journal") {
      journal_path = value;
    } else if (flag == "--events" && !value.empty()) {
      limit = std::atoll(value.c_str());
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  const char* kubeconfig = std::getenv("KUBECONFIG");
  if (ns.empty() || name.empty() || journal_path.empty() || kubeconfig == nullptr) {
    std::fprintf(stderr, "usage: KUBECONFIG=... %s --namespace=NS --sweep=NAME --journal=FILE\n",
                 argv[0]);
    return 2;
  }

  StatusOr<std::vector<Event>> events = Journal::Read(journal_path);
  if (!events.ok()) return Fail("reading the journal", events.status());
  if (limit >= 0 && static_cast<size_t>(limit) < events->size()) {
    events->resize(static_cast<size_t>(limit));
  }

  StatusOr<kube::KubeConfig> config = kube::LoadKubeconfig(kubeconfig);
  if (!config.ok()) return Fail(kubeconfig, config.status());
  kube::ClientOptions client_options;
  client_options.qps = 1000;  // a local API server; the writes are sequential anyway
  client_options.burst = 1000;
  StatusOr<std::unique_ptr<kube::Client>> client = kube::Client::Create(*config, client_options);
  if (!client.ok()) return Fail("client", client.status());
  kube::Client& api = **client;

  StatusOr<nlohmann::json> sweep = api.Get(kube::kBudgetSweeps, ns, name);
  if (!sweep.ok()) return Fail("reading the sweep", sweep.status());
  StatusOr<SweepSpec> spec = ParseSweep(*sweep);
  if (!spec.ok()) return Fail("the sweep's spec", spec.status());
  SweepModel model(*spec);
  for (const Event& e : *events) {
    if (Status s = model.Apply(e); !s.ok()) return Fail("replaying the journal", s);
  }

  kube::SweepOwner owner;
  owner.name = name;
  owner.uid = sweep->value("/metadata/uid"_json_pointer, "");
  // The operator's cache: twice the parallelism.
  kube::TrialLog log(api, ns, owner, 2 * static_cast<size_t>(spec->parallelism));
  auto started = std::chrono::steady_clock::now();
  constexpr size_t kChunk = 10'000;  // events per Append, for the progress lines
  for (size_t from = 0; from < events->size(); from += kChunk) {
    size_t to = std::min(events->size(), from + kChunk);
    std::vector<Event> chunk(events->begin() + static_cast<std::ptrdiff_t>(from),
                             events->begin() + static_cast<std::ptrdiff_t>(to));
    if (Status s = log.Append(chunk); !s.ok()) return Fail("recording events", s);
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    std::fprintf(stderr, "replay_sweep: %zu of %zu events recorded in %.0f s\n", to, events->size(),
                 took.count());
  }
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;

  // The charge of the ended segments, at the latest end: all of it when the journal ended the
  // sweep (a segment still running would be listed by its pod, which a replay has none of).
  std::vector<SegmentStatus> segments = RecordedCharges(model, {});
  double now = 0;
  for (const SegmentStatus& s : segments) now = std::max(now, *s.finished_unix_seconds);
  Ledger ledger(spec->budget_gpu_hours * 3600);
  ledger.Observe(segments, now);
  nlohmann::json status = BuildStatus(model, ledger, nlohmann::json::array());
  StatusOr<nlohmann::json> written =
      api.PatchStatus(kube::kBudgetSweeps, ns, name, {{"status", status}});
  if (!written.ok()) return Fail("writing the status", written.status());

  nlohmann::json result = {{"events", events->size()},
                           {"trials", model.trial_count()},
                           {"phase", SweepPhaseName(model.phase())},
                           {"record_seconds", took.count()}};
  std::printf("%s\n", result.dump().c_str());
  return 0;
}

}  // namespace
}  // namespace bsw

int main(int argc, char** argv) { return bsw::Main(argc, argv); }
