// budgetsweep: the command line. Wiring only; the work is in core, controller and adapters.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "operator/adapters/kube/config.h"
#include "operator/adapters/local/atomic_file.h"
#include "operator/adapters/local/local_backend.h"
#include "operator/adapters/local/pool_file.h"
#include "operator/adapters/local/process.h"
#include "operator/adapters/local/state_dir.h"
#include "operator/adapters/prometheus/api_source.h"
#include "operator/adapters/system_clock.h"
#include "operator/adapters/yaml/sweep_file.h"
#include "operator/cmd/operator_command.h"
#include "operator/cmd/preflight.h"
#include "operator/cmd/progress.h"
#include "operator/controller/journal.h"
#include "operator/controller/sweep_controller.h"
#include "operator/core/api.h"
#include "operator/core/spec_edits.h"
#include "operator/report/report.h"

namespace bsw {
namespace {

namespace fs = std::filesystem;

constexpr int kExitFailed = 1;
constexpr int kExitInvalid = 2;
constexpr int kExitInterrupted = 130;

std::atomic<bool> g_interrupted{false};

void OnSignal(int) { g_interrupted = true; }

// SIGCHLD, blocked in every thread of the runner so that the run loop can wait for it. Children
// do not keep the mask: each segment's supervisor sets its own.
sigset_t BlockChildExits() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// Prints "error: " and the first line of `message`, then each further line indented.
void PrintError(const std::string& message) {
  size_t end = message.find('\n');
  std::fprintf(stderr, "error: %s\n", message.substr(0, end).c_str());
  while (end != std::string::npos) {
    size_t start = end + 1;
    end = message.find('\n', start);
    std::fprintf(stderr, "  %s\n", message.substr(start, end - start).c_str());
  }
}

// Reads and validates a sweep file; prints every problem and returns nullopt when it is invalid.
std::optional<SweepSpec> LoadSweep(const std::string& path, nlohmann::json* object) {
  StatusOr<nlohmann::json> doc = ReadSweepFile(path);
  if (!doc.ok()) {
    std::fprintf(stderr, "error: %s\n", doc.status().message().c_str());
    return std::nullopt;
  }
  StatusOr<SweepSpec> spec = ParseSweep(*doc);
  if (!spec.ok()) {
    PrintError(path + " is not a valid BudgetSweep:\n" + spec.status().message());
    return std::nullopt;
  }
  if (object != nullptr) *object = *doc;
  return *spec;
}

int Validate(const std::string& path) {
  StatusOr<nlohmann::json> doc = ReadSweepFile(path);
  if (doc.ok() && doc->is_object() && doc->value("kind", nlohmann::json()) == kPoolKind) {
    StatusOr<PoolSpec> pool = local::ReadPoolFile(path);
    if (!pool.ok()) {
      PrintError(pool.status().message());
      return kExitInvalid;
    }
    std::printf("%s: valid BudgetPool \"%s\"\n", path.c_str(), pool->name.c_str());
    return 0;
  }
  std::optional<SweepSpec> spec = LoadSweep(path, nullptr);
  if (!spec) return kExitInvalid;
  std::printf("%s: valid BudgetSweep \"%s\"\n", path.c_str(), spec->name.c_str());
  return 0;
}

// Binds the state directory to one sweep and returns the spec to run. A new directory records
// the sweep's object. An existing one must hold the same sweep, edited in editable fields only
// (ApplySpecEdit): the edited object is recorded and the sweep goes on with those fields.
// REQUIRES: this process holds the directory's StateDirLock.
StatusOr<SweepSpec> PrepareStateDir(const fs::path& dir, const SweepSpec& spec,
                                    const nlohmann::json& object) {
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return InvalidArgumentError("--state-dir " + dir.string() + ": not writable (" +
                                std::strerror(errno) + ")");
  }
  fs::path record = dir / "sweep.json";
  StatusOr<std::string> recorded = local::ReadFile(record);
  if (recorded.status().code() == StatusCode::kNotFound) {
    if (Status s = local::WriteFileAtomically(record, object.dump(2) + "\n"); !s.ok()) return s;
    return spec;
  }
  if (!recorded.ok()) return recorded.status();
  nlohmann::json previous = nlohmann::json::parse(*recorded, nullptr, false);
  std::string name = previous.is_object()
                         ? previous.value("metadata", nlohmann::json::object()).value("name", "")
                         : "";
  if (name != spec.name) {
    return InvalidArgumentError("--state-dir " + dir.string() + " holds sweep \"" + name +
                                "\", not \"" + spec.name + "\"; use another directory");
  }
  StatusOr<SweepSpec> started = ParseSweep(previous);
  if (!started.ok()) {
    // Recorded under an input this release refuses (a budget it cannot honour): the fixed file
    // takes its place, so that the sweep can go on.
    std::fprintf(stderr, "note: %s holds a sweep this release refuses; going on with the file\n",
                 record.c_str());
    if (Status s = local::WriteFileAtomically(record, object.dump(2) + "\n"); !s.ok()) return s;
    return spec;
  }
  StatusOr<SweepSpec> edited = ApplySpecEdit(*started, spec);
  if (!edited.ok()) {
    return InvalidArgumentError(
        "--state-dir " + dir.string() + " holds sweep \"" + spec.name + "\" as it started; only " +
        kEditableFields +
        " may change on a started sweep (undo the other edits, or start the sweep anew with "
        "another --state-dir):\n" +
        edited.status().message());
  }
  if (previous != object) {
    if (Status s = local::WriteFileAtomically(record, object.dump(2) + "\n"); !s.ok()) return s;
  }
  return edited;
}

struct RunOptions {
  std::string file;
  std::string state_dir;
  std::string output = "text";
  double poll_seconds = 0.25;
  std::string pool;                   // a BudgetPool file shared with other local sweeps
  std::vector<std::string> pass_env;  // runner variables trials inherit besides the usual ones
};

// The pool's line of the summary: what every sweep and this one hold of it.
std::string PoolLine(const local::PoolFile& pool, const std::string& path) {
  double held = PoolHeld(pool.accounts()) / 3600;
  char line[256];
  std::snprintf(
      line, sizeof line, "pool %s (%s): %.4f of %.4f GPU-hours used or reserved by %zu sweeps\n",
      pool.spec().name.c_str(), path.c_str(), held, pool.spec().gpu_hours, pool.accounts().size());
  return line;
}

int Run(const RunOptions& opts) {
  // What the runner writes (the journal, launch records with the trials' environment) is the
  // user's alone; trials keep the user's own mask.
  const mode_t trial_umask = umask(077);
  nlohmann::json object;
  std::optional<SweepSpec> spec = LoadSweep(opts.file, &object);
  if (!spec) return kExitInvalid;
  if (spec->container.command.empty()) {
    std::fprintf(stderr,
                 "error: %s: spec.trial.template.spec.containers[0].command: required to run "
                 "trials locally (an image's entrypoint is unknown here)\n",
                 opts.file.c_str());
    return kExitInvalid;
  }
  // Preflight: what the trials need must be there before any is launched, or each one would
  // fail in turn (a missing trainer with exit code 127).
  const char* runner_path = std::getenv("PATH");
  std::string path = runner_path != nullptr ? runner_path : "/bin:/usr/bin";  // execvp's default
  for (const auto& [name, value] : spec->container.env) {
    if (name == "PATH") path = value;
  }
  std::vector<std::string> problems = Preflight(*spec, path, kTrainerFashionMnistDir);
  for (const std::string& problem : problems) {
    std::fprintf(stderr, "error: %s: %s\n", opts.file.c_str(), problem.c_str());
  }
  if (!problems.empty()) return kExitInvalid;
  std::string state_dir = opts.state_dir;
  if (state_dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / ("budgetsweep-" + spec->name + "-XXXXXX"));
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::fprintf(stderr, "error: cannot create a state directory in %s\n",
                   fs::temp_directory_path().c_str());
      return kExitFailed;
    }
    state_dir = tmpl;
  }
  // Locked before anything in it is read: one runner per state directory.
  StatusOr<local::StateDirLock> held = local::StateDirLock::Acquire(state_dir);
  if (!held.ok()) {
    PrintError(held.status().message());
    return kExitInvalid;
  }
  state_dir = held->path().string();
  StatusOr<SweepSpec> resumed = PrepareStateDir(held->path(), *spec, object);
  if (!resumed.ok()) {
    PrintError(resumed.status().message());
    return kExitInvalid;
  }
  spec = *resumed;

  // Before any thread exists, so that every thread inherits the mask.
  const sigset_t child_exits = BlockChildExits();
  local::LocalBackendOptions backend_options;
  backend_options.state_dir = state_dir;
  backend_options.supervisor_command = {
      (fs::read_symlink("/proc/self/exe").parent_path() / "budgetsweep-supervise").string()};
  backend_options.gpu_count = local::DetectGpuCount();
  backend_options.pass_env = opts.pass_env;
  backend_options.trial_umask = trial_umask;
  StatusOr<std::unique_ptr<local::LocalBackend>> backend =
      local::LocalBackend::Create(backend_options);
  if (!backend.ok()) {
    std::fprintf(stderr, "error: %s\n", backend.status().message().c_str());
    return kExitFailed;
  }
  if (backend_options.gpu_count == 0 && spec->trial_gpus > 0) {
    std::fprintf(stderr,
                 "note: no GPU found; trials run on the CPU and are charged as %d device(s) each\n",
                 spec->trial_gpus);
  }
  SystemClock clock;
  std::unique_ptr<MetricSource> metrics = prom::MetricSourceFor(*spec, clock);
  StatusOr<Journal> journal = Journal::Open(state_dir);
  if (!journal.ok()) {
    std::fprintf(stderr, "error: %s\n", journal.status().message().c_str());
    return kExitFailed;
  }
  std::unique_ptr<local::PoolFile> pool;
  if (!opts.pool.empty()) {
    StatusOr<std::unique_ptr<local::PoolFile>> opened =
        local::PoolFile::Open(opts.pool, spec->name, spec->pool_name, state_dir, clock);
    if (!opened.ok()) {
      PrintError(opened.status().message());
      return kExitInvalid;
    }
    pool = std::move(*opened);
    BindPool(pool->spec(), &*spec);
    // `budgetsweep report` binds the sweep the same way (kPoolRecord).
    Status recorded = local::WriteFileAtomically(fs::path(state_dir) / kPoolRecord,
                                                 pool->object().dump(2) + "\n");
    if (!recorded.ok()) {
      std::fprintf(stderr, "error: %s\n", recorded.message().c_str());
      return kExitFailed;
    }
  } else if (!spec->pool_name.empty()) {
    std::fprintf(stderr,
                 "error: %s: spec.budget.poolRef.name is \"%s\": run it with --pool FILE, the "
                 "BudgetPool file it shares with other sweeps\n",
                 opts.file.c_str(), spec->pool_name.c_str());
    return kExitInvalid;
  }
  SweepController controller(*spec, backend->get(), metrics.get(), &*journal, &clock);
  if (pool) controller.SetBudgetGate(pool.get());
  if (Status s = controller.Recover(); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return kExitFailed;
  }

  bool json_output = opts.output == "json";
  std::FILE* human = json_output ? stderr : stdout;
  Progress progress(human, isatty(fileno(human)) == 1);
  controller.OnEvent([&](const Event& e) { progress.OnEvent(controller, e); });
  if (!json_output && controller.model().trial_count() > 0) {
    std::fprintf(human, "resuming sweep %s from %s\n", spec->name.c_str(), state_dir.c_str());
  }

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  double backoff = opts.poll_seconds;
  bool passed_again = false;
  bool disk_full = false;
  // Runs until the sweep is finished and every segment it started has ended.
  while (!g_interrupted) {
    StatusOr<Step> plan = controller.Pass();
    if (!plan.ok() && plan.status().code() == StatusCode::kFailedPrecondition) {
      PrintError(plan.status().message());  // nothing heals it but the user
      return kExitInvalid;
    }
    // A full disk: the sweep waits for space, with one message.
    if (local::IsDiskFull(plan.status())) {
      if (!std::exchange(disk_full, true)) {
        PrintError("the disk of " + state_dir + " is full (" + plan.status().message() +
                   ")\nfree space on it: the sweep waits, and goes on by itself once there is");
      }
      clock.SleepFor(std::min(5.0, backoff));
      continue;
    }
    if (!plan.ok()) {
      std::fprintf(stderr, "warning: %s (retrying in %.1f s)\n", plan.status().message().c_str(),
                   backoff);
      clock.SleepFor(backoff);
      backoff = std::min(30.0, backoff * 2);
      continue;
    }
    if (std::exchange(disk_full, false)) std::fprintf(stderr, "disk space is back: going on\n");
    backoff = opts.poll_seconds;
    progress.Refresh(controller, clock.NowUnixSeconds());
    if (controller.model().finished()) {
      StatusOr<bool> ended = controller.AllSegmentsEnded();
      if (ended.ok() && *ended) {
        // The segments that ended since this pass listed them are journaled by one more, so the
        // summary counts no trial running.
        if (StatusOr<Step> last = controller.Pass(); !last.ok()) {
          std::fprintf(stderr, "warning: %s\n", last.status().message().c_str());
        }
        break;
      }
    }
    // A pass that recorded a segment's end left its trial paused (or done) only once journaled:
    // the next pass may resume it, so it comes at once rather than after the poll (once in a row).
    passed_again =
        !passed_again && std::any_of(plan->events.begin(), plan->events.end(), [](const Event& e) {
          return std::holds_alternative<event::SegmentEnded>(e);
        });
    if (passed_again) continue;
    // Until the next poll, or less when a child exits: a segment's supervisor exits as soon as
    // its trainer has, so the next pass refills the slot at once. Ctrl-C also ends the wait.
    local::WaitForSignal(child_exits, opts.poll_seconds);
  }

  if (g_interrupted) {
    std::fprintf(stderr,
                 "\ninterrupted: stopping running trials (they checkpoint and resume "
                 "with the same --state-dir)\n");
    if (Status s = controller.Interrupt(); !s.ok()) {
      std::fprintf(stderr, "warning: %s\n", s.message().c_str());
    }
    double deadline = clock.NowUnixSeconds() + spec->grace_seconds + 5;
    while (clock.NowUnixSeconds() < deadline) {
      StatusOr<bool> ended = controller.AllSegmentsEnded();
      if (ended.ok() && *ended) break;
      clock.SleepFor(0.2);
    }
    // One last look, so the summary charges the seconds the stopped trials ran.
    if (Status s = controller.Refresh(); !s.ok()) {
      std::fprintf(stderr, "warning: %s\n", s.message().c_str());
    } else if (Status settled = controller.SettleGate(); !settled.ok()) {
      std::fprintf(stderr, "warning: %s\n", settled.message().c_str());
    }
  }

  if (json_output) {
    std::printf("%s\n", controller.StatusJson().dump(2).c_str());
  } else {
    std::fprintf(human, "\n%s", Progress::Summary(controller, state_dir).c_str());
    if (pool) std::fprintf(human, "%s", PoolLine(*pool, opts.pool).c_str());
  }
  if (g_interrupted) return kExitInterrupted;
  return controller.model().phase() == SweepPhase::kFailed ? kExitFailed : 0;
}

struct ReportOptions {
  std::string source;  // STATE_DIR, or NAMESPACE/SWEEP with --kubeconfig
  std::string kubeconfig;
  std::string output;
  std::string png;
};

// The sweep NAMESPACE/SWEEP on the cluster of the kubeconfig file.
StatusOr<ReportInput> LoadClusterReport(const ReportOptions& opts, double now) {
  size_t slash = opts.source.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == opts.source.size()) {
    return InvalidArgumentError("with --kubeconfig, give the sweep as NAMESPACE/SWEEP, not \"" +
                                opts.source + "\"");
  }
  StatusOr<kube::KubeConfig> config = kube::LoadKubeconfig(opts.kubeconfig);
  if (!config.ok()) return InvalidArgumentError("--kubeconfig: " + config.status().message());
  StatusOr<std::unique_ptr<kube::Client>> client = kube::Client::Create(*config, {});
  if (!client.ok()) return client.status();
  return LoadClusterSweep(**client, opts.source.substr(0, slash), opts.source.substr(slash + 1),
                          now);
}

// The report is written outside every state directory: never over a sweep's own files.
Status CheckReportOutput(const std::string& output) {
  if (output.empty()) return OkStatus();
  std::error_code ec;
  fs::path file = fs::weakly_canonical(output, ec);
  if (ec) return InvalidArgumentError(output + ": " + ec.message());
  for (fs::path dir = file.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / local::kStateMarker, ec) || fs::exists(dir / "journal.jsonl", ec)) {
      return InvalidArgumentError(output + ": inside the state directory " + dir.string() +
                                  "; write the report elsewhere");
    }
    if (dir == dir.root_path()) break;
  }
  return OkStatus();
}

int Report(const ReportOptions& opts) {
  for (const std::string& output : {opts.output, opts.png}) {
    if (Status s = CheckReportOutput(output); !s.ok()) {
      PrintError(s.message());
      return kExitInvalid;
    }
  }
  double now = SystemClock().NowUnixSeconds();
  StatusOr<ReportInput> input =
      opts.kubeconfig.empty() ? LoadStateDir(opts.source, now) : LoadClusterReport(opts, now);
  if (!input.ok()) {
    std::fprintf(stderr, "error: %s\n", input.status().message().c_str());
    StatusCode code = input.status().code();
    bool invalid = code == StatusCode::kInvalidArgument || code == StatusCode::kNotFound;
    return invalid ? kExitInvalid : kExitFailed;
  }
  if (Status written = WriteReport(*input, opts.output, opts.png); !written.ok()) {
    std::fprintf(stderr, "error: %s\n", written.message().c_str());
    return written.code() == StatusCode::kInvalidArgument ? kExitInvalid : kExitFailed;
  }
  std::printf("%s: report of sweep \"%s\" (%zu events)\n", opts.output.c_str(),
              input->spec.name.c_str(), input->events.size());
  return 0;
}

}  // namespace
}  // namespace bsw

int main(int argc, char** argv) {
  CLI::App app{"budgetsweep: hyperparameter sweeps under a hard GPU-hour budget"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("budgetsweep ") + BSW_VERSION);

  bsw::RunOptions run;
  CLI::App* run_cmd =
      app.add_subcommand("run", "Run a sweep on this machine, trials as local processes");
  run_cmd->add_option("FILE", run.file, "BudgetSweep YAML or JSON file")->required();
  run_cmd->add_option("--state-dir", run.state_dir,
                      "Directory for the journal, trial logs and checkpoints; run again with the "
                      "same directory to resume (default: a new temporary directory)");
  run_cmd->add_option("-o,--output", run.output, "Final output: text summary or json status")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  run_cmd
      ->add_option("--poll-interval", run.poll_seconds,
                   "Seconds between reconcile passes (a trial process's exit starts one at once)")
      ->check(CLI::Range(0.05, 60.0))
      ->capture_default_str();

  run_cmd->add_option("--pool", run.pool,
                      "BudgetPool file (YAML or JSON) whose GPU-hours this sweep shares with the "
                      "other local sweeps run with it; its ledger and lock lie beside it");
  run_cmd->add_option("--pass-env", run.pass_env,
                      "Also give trials this variable of the runner's environment (repeatable); "
                      "otherwise they inherit only PATH, HOME, locale, proxy, CUDA/NVIDIA and "
                      "thread settings (docs/design.md, \"A trial's environment\")");

  std::string validate_file;
  CLI::App* validate_cmd = app.add_subcommand(
      "validate", "Check a BudgetSweep or BudgetPool file; exit 2 listing every problem");
  validate_cmd->add_option("FILE", validate_file, "BudgetSweep or BudgetPool YAML or JSON file")
      ->required();

  bsw::ReportOptions report;
  CLI::App* report_cmd = app.add_subcommand(
      "report", "Write a sweep's report: one self-contained HTML file with its charts");
  report_cmd
      ->add_option("SOURCE", report.source,
                   "The --state-dir of a budgetsweep run; with --kubeconfig, NAMESPACE/SWEEP")
      ->required();
  report_cmd->add_option("-o,--output", report.output, "HTML file to write")->required();
  report_cmd->add_option("--png", report.png,
                         "Also write the main chart (best objective against device-hours) as PNG");
  report_cmd->add_option("--kubeconfig", report.kubeconfig,
                         "Read the sweep and its BudgetSweepTrial records from this cluster");

  bsw::OperatorOptions op;
  CLI::App* operator_cmd = app.add_subcommand(
      "operator", "Run the Kubernetes operator: reconcile BudgetSweeps into trial pods");
  operator_cmd->add_option("--kubeconfig", op.kubeconfig,
                           "kubeconfig file (default: $KUBECONFIG, else in-cluster config)");
  operator_cmd->add_option("--namespace", op.ns, "Namespace to serve (default: all namespaces)");
  operator_cmd
      ->add_option("--metrics-addr", op.metrics_addr,
                   "host:port for the operator's Prometheus metrics")
      ->capture_default_str();
  operator_cmd
      ->add_flag("--metrics-secure", op.metrics_secure,
                 "Serve the metrics over HTTPS, and /metrics only to callers whose bearer token "
                 "passes a TokenReview and a SubjectAccessReview for get on the non-resource URL "
                 "/metrics (needs create on tokenreviews and subjectaccessreviews); "
                 "/healthz and /readyz stay open")
      ->capture_default_str();
  operator_cmd->add_option(
      "--metrics-cert-file", op.metrics_cert_file,
      "PEM certificate (chain) for --metrics-secure, re-read when it changes; without it and "
      "--metrics-key-file, a self-signed certificate is made at start");
  operator_cmd->add_option("--metrics-key-file", op.metrics_key_file,
                           "PEM private key of --metrics-cert-file");
  operator_cmd
      ->add_option("--health-addr", op.health_addr,
                   "host:port for /healthz and /readyz (plain HTTP, no authentication)")
      ->capture_default_str();
  operator_cmd->add_flag(
      "--check-creator-rights", op.check_creator_rights,
      "Before a sweep's first pod, check with SubjectAccessReviews that its creator (annotation "
      "budgetsweep.dev/creator, which the chart's MutatingAdmissionPolicy records) may create "
      "pods in its namespace and create serviceaccounts/token for the template's "
      "serviceAccountName; a sweep whose creator may not gets condition CreatorAuthorized False "
      "and no pod (needs create on subjectaccessreviews)");
  operator_cmd->add_flag("--leader-elect", op.leader_elect,
                         "Elect one active replica through a coordination.k8s.io Lease");
  operator_cmd->add_option("--leader-election-namespace", op.leader_election_namespace,
                           "Namespace of the Lease (default: --namespace, else the client's)");
  operator_cmd->add_option("--lease-name", op.lease_name, "Name of the Lease")
      ->capture_default_str();
  operator_cmd
      ->add_option("--resync-interval", op.resync_seconds,
                   "Seconds between passes over a running sweep")
      ->check(CLI::Range(0.05, 60.0))
      ->capture_default_str();
  operator_cmd
      ->add_option("--trial-metrics-port", op.trial_metrics_port,
                   "Port of the trainer's metrics endpoint in trial pods")
      ->check(CLI::Range(1, 65535))
      ->capture_default_str();
  operator_cmd
      ->add_option("--checkpoint-dir", op.checkpoint_dir,
                   "Trial checkpoints go to <dir>/<trial> inside trial pods")
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : bsw::kExitInvalid;
  }
  if (*run_cmd) return bsw::Run(run);
  if (*operator_cmd) return bsw::RunOperator(op);
  if (*report_cmd) return bsw::Report(report);
  return bsw::Validate(validate_file);
}
