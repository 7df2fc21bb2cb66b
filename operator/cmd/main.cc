// budgetsweep: the command line. Wiring only; the work is in core, controller and adapters.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
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
#include "operator/adapters/yaml/emitter.h"
#include "operator/adapters/yaml/sweep_file.h"
#include "operator/cmd/operator_command.h"
#include "operator/cmd/preflight.h"
#include "operator/cmd/progress.h"
#include "operator/controller/journal.h"
#include "operator/controller/run_loop.h"
#include "operator/controller/sweep_controller.h"
#include "operator/core/api.h"
#include "operator/core/katib.h"
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

// The parts of a local run, opened one after another by the steps below. Each step prints what
// went wrong and returns the exit code, or 0 to go on.
struct LocalRun {
  SweepSpec spec;
  nlohmann::json object;  // the sweep file's object
  std::string state_dir;
  std::optional<local::StateDirLock> lock;
  std::unique_ptr<local::LocalBackend> backend;
  std::unique_ptr<MetricSource> metrics;
  std::optional<Journal> journal;
  std::unique_ptr<local::PoolFile> pool;
};

// Reads the sweep file and checks that its trials can run here.
int LoadRunnable(const RunOptions& opts, LocalRun* run) {
  std::optional<SweepSpec> spec = LoadSweep(opts.file, &run->object);
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
  run->spec = std::move(spec).value();
  return 0;
}

// Locks the state directory (a new temporary one without --state-dir) and binds it to the sweep.
int BindStateDir(const RunOptions& opts, LocalRun* run) {
  std::string state_dir = opts.state_dir;
  if (state_dir.empty()) {
    std::string tmpl = (fs::temp_directory_path() / ("budgetsweep-" + run->spec.name + "-XXXXXX"));
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
  run->lock.emplace(std::move(held).value());
  run->state_dir = run->lock->path().string();
  StatusOr<SweepSpec> resumed = PrepareStateDir(run->lock->path(), run->spec, run->object);
  if (!resumed.ok()) {
    PrintError(resumed.status().message());
    return kExitInvalid;
  }
  run->spec = std::move(resumed).value();
  return 0;
}

// The trial backend, the metric source and the journal.
int OpenPorts(const RunOptions& opts, mode_t trial_umask, LocalRun* run) {
  local::LocalBackendOptions backend_options;
  backend_options.state_dir = run->state_dir;
  const fs::path own_dir = fs::read_symlink("/proc/self/exe").parent_path();
  backend_options.supervisor_command = {(own_dir / "budgetsweep-supervise").string()};
  backend_options.collect_program = (own_dir / "budgetsweep-collect").string();
  backend_options.gpu_count = local::DetectGpuCount();
  backend_options.pass_env = opts.pass_env;
  backend_options.trial_umask = trial_umask;
  StatusOr<std::unique_ptr<local::LocalBackend>> backend =
      local::LocalBackend::Create(backend_options);
  if (!backend.ok()) {
    std::fprintf(stderr, "error: %s\n", backend.status().message().c_str());
    return kExitFailed;
  }
  run->backend = std::move(backend).value();
  if (backend_options.gpu_count == 0 && run->spec.trial_gpus > 0) {
    std::fprintf(stderr,
                 "note: no GPU found; trials run on the CPU and are charged as %d device(s) each\n",
                 run->spec.trial_gpus);
  }
  run->metrics = prom::MetricSourceFor(run->spec, SystemClock::Get());
  StatusOr<Journal> journal = Journal::Open(run->state_dir);
  if (!journal.ok()) {
    std::fprintf(stderr, "error: %s\n", journal.status().message().c_str());
    return kExitFailed;
  }
  run->journal.emplace(std::move(journal).value());
  return 0;
}

// The BudgetPool file of --pool, which the sweep is bound to; none without --pool.
int OpenPool(const RunOptions& opts, LocalRun* run) {
  if (opts.pool.empty()) {
    if (run->spec.pool_name.empty()) return 0;
    std::fprintf(stderr,
                 "error: %s: spec.budget.poolRef.name is \"%s\": run it with --pool FILE, the "
                 "BudgetPool file it shares with other sweeps\n",
                 opts.file.c_str(), run->spec.pool_name.c_str());
    return kExitInvalid;
  }
  StatusOr<std::unique_ptr<local::PoolFile>> opened = local::PoolFile::Open(
      opts.pool, run->spec.name, run->spec.pool_name, run->state_dir, SystemClock::Get());
  if (!opened.ok()) {
    PrintError(opened.status().message());
    return kExitInvalid;
  }
  run->pool = std::move(opened).value();
  BindPool(run->pool->spec(), &run->spec);
  // `budgetsweep report` binds the sweep the same way (kPoolRecord).
  Status recorded = local::WriteFileAtomically(fs::path(run->state_dir) / kPoolRecord,
                                               run->pool->object().dump(2) + "\n");
  if (!recorded.ok()) {
    std::fprintf(stderr, "error: %s\n", recorded.message().c_str());
    return kExitFailed;
  }
  return 0;
}

// What the run loop tells the user, on stderr; the progress goes to `progress`.
class RunPrinter final : public RunOutput {
 public:
  RunPrinter(Progress* progress, const SweepController* controller, std::string state_dir)
      : progress_(progress), controller_(controller), state_dir_(std::move(state_dir)) {}

  void Passed(double now) override { progress_->Refresh(*controller_, now); }
  void PassFailed(const Status& error, double retry_seconds) override {
    std::fprintf(stderr, "warning: %s (retrying in %.1f s)\n", error.message().c_str(),
                 retry_seconds);
  }
  void DiskFull(const Status& error) override {
    PrintError("the disk of " + state_dir_ + " is full (" + error.message() +
               ")\nfree space on it: the sweep waits, and goes on by itself once there is");
  }
  void DiskBack() override { std::fprintf(stderr, "disk space is back: going on\n"); }
  void Stopping() override {
    std::fprintf(stderr,
                 "\ninterrupted: stopping running trials (they checkpoint and resume "
                 "with the same --state-dir)\n");
  }
  void Warning(const Status& error) override {
    std::fprintf(stderr, "warning: %s\n", error.message().c_str());
  }

 private:
  Progress* progress_;
  const SweepController* controller_;
  std::string state_dir_;
};

// Ctrl-C and SIGTERM, through OnSignal; a wait also ends when a child (a segment's supervisor)
// exits.
class ProcessSignals final : public RunSignals {
 public:
  explicit ProcessSignals(const sigset_t& child_exits) : child_exits_(child_exits) {}

  bool Interrupted() const override { return g_interrupted; }
  void Wait(double seconds) override { local::WaitForSignal(child_exits_, seconds); }

 private:
  sigset_t child_exits_;
};

// Runs the sweep's loop with its progress on `human` and prints its end: the JSON status, or
// the summary. Returns the exit code.
int Drive(const RunOptions& opts, const sigset_t& child_exits, SweepController& controller,
          const LocalRun& run) {
  bool json_output = opts.output == "json";
  std::FILE* human = json_output ? stderr : stdout;
  Progress progress(human, isatty(fileno(human)) == 1);
  controller.OnEvent([&](const Event& e) { progress.OnEvent(controller, e); });
  if (!json_output && controller.model().trial_count() > 0) {
    std::fprintf(human, "resuming sweep %s from %s\n", run.spec.name.c_str(),
                 run.state_dir.c_str());
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  RunPrinter printer(&progress, &controller, run.state_dir);
  ProcessSignals signals(child_exits);
  RunLoopOptions loop_options;
  loop_options.poll_seconds = opts.poll_seconds;
  loop_options.disk_full = local::IsDiskFull;
  RunLoop loop(&controller, &SystemClock::Get(), &signals, &printer, loop_options);
  StatusOr<RunEnd> end = loop.Run();
  if (!end.ok()) {
    PrintError(end.status().message());  // nothing heals it but the user
    return kExitInvalid;
  }
  if (json_output) {
    std::printf("%s\n", controller.StatusJson().dump(2).c_str());
  } else {
    std::fprintf(human, "\n%s", Progress::Summary(controller, run.state_dir).c_str());
    if (run.pool) std::fprintf(human, "%s", PoolLine(*run.pool, opts.pool).c_str());
  }
  if (*end == RunEnd::kInterrupted) return kExitInterrupted;
  return controller.model().phase() == SweepPhase::kFailed ? kExitFailed : 0;
}

int Run(const RunOptions& opts) {
  // What the runner writes (the journal, launch records with the trials' environment) is the
  // user's alone; trials keep the user's own mask.
  const mode_t trial_umask = umask(077);
  LocalRun run;
  if (int code = LoadRunnable(opts, &run)) return code;
  if (int code = BindStateDir(opts, &run)) return code;
  // Before any thread exists, so that every thread inherits the mask.
  const sigset_t child_exits = BlockChildExits();
  if (int code = OpenPorts(opts, trial_umask, &run)) return code;
  if (int code = OpenPool(opts, &run)) return code;
  SweepController controller(run.spec, run.backend.get(), run.metrics.get(), &*run.journal,
                             &SystemClock::Get());
  if (run.pool) controller.SetBudgetGate(run.pool.get());
  if (Status s = controller.Recover(); !s.ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return kExitFailed;
  }
  return Drive(opts, child_exits, controller, run);
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

// `budgetsweep convert katib`: the BudgetSweep on stdout, each part that did not map on stderr;
// exit 2 when one of them keeps the sweep from running as it is.
int ConvertKatibFile(const std::string& path, const KatibOptions& options) {
  StatusOr<nlohmann::json> experiment = ReadSweepFile(path);
  if (!experiment.ok()) {
    std::fprintf(stderr, "error: %s\n", experiment.status().message().c_str());
    return kExitInvalid;
  }
  KatibConversion conversion = ConvertKatib(*experiment, options);
  std::printf("%s%s", ConversionComment(conversion, path).c_str(),
              EmitYaml(conversion.sweep, SweepKeyOrder()).c_str());
  for (const KatibProblem& problem : conversion.problems) {
    std::fprintf(stderr, "budgetsweep convert katib: %s: %s\n", problem.path.c_str(),
                 problem.message.c_str());
  }
  return conversion.Runnable() ? 0 : kExitInvalid;
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

  std::string katib_file;
  double gpu_hours = 0;
  double max_resource = 0;
  CLI::App* convert_cmd =
      app.add_subcommand("convert", "Print the BudgetSweep equivalent to another tool's sweep");
  convert_cmd->require_subcommand(1);
  CLI::App* katib_cmd = convert_cmd->add_subcommand(
      "katib",
      "Convert a Katib v1beta1 Experiment; list what does not map on stderr, exit 2 if the sweep "
      "would not run as it is");
  katib_cmd->add_option("FILE", katib_file, "Katib Experiment YAML or JSON file")->required();
  CLI::Option* gpu_hours_opt =
      katib_cmd->add_option("--gpu-hours", gpu_hours, "The sweep's budget (Katib has none)")
          ->check(CLI::PositiveNumber);
  CLI::Option* max_resource_opt =
      katib_cmd
          ->add_option("--max-resource", max_resource,
                       "spec.resource.max: the objective values a trial reports in all (default "
                       "1, one at the end); with hyperband, replaces r_l")
          ->check(CLI::PositiveNumber);

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
  operator_cmd->add_option(
      "--collect-image", op.collect_image,
      "Image with /usr/local/bin/budgetsweep-collect (the operator's own), for sweeps whose "
      "trainers print their values (spec.metrics.collector StdOut or File)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : bsw::kExitInvalid;
  }
  if (*run_cmd) return bsw::Run(run);
  if (*operator_cmd) return bsw::RunOperator(op);
  if (*report_cmd) return bsw::Report(report);
  if (*convert_cmd) {
    bsw::KatibOptions katib;
    if (*gpu_hours_opt) katib.gpu_hours = gpu_hours;
    if (*max_resource_opt) katib.max_resource = max_resource;
    return bsw::ConvertKatibFile(katib_file, katib);
  }
  return bsw::Validate(validate_file);
}
