// kubectl-bsw: the kubectl plugin (`kubectl bsw ...`) for BudgetSweeps on a cluster. Wiring only:
// the views are in views.h, the reads in sweep_reads.h, the kubeconfig rules in
// kubeconfig_flags.h.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>

#include "operator/adapters/kube/client.h"
#include "operator/adapters/system_clock.h"
#include "operator/cmd/kubectl/format.h"
#include "operator/cmd/kubectl/kubeconfig_flags.h"
#include "operator/cmd/kubectl/sweep_reads.h"
#include "operator/cmd/kubectl/views.h"
#include "operator/report/report.h"

namespace bsw::kubectl {
namespace {

constexpr int kExitError = 1;
constexpr int kExitUsage = 2;

std::atomic<bool> g_interrupted{false};

void OnInterrupt(int) { g_interrupted = true; }

int Fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return kExitError;
}

double Now() { return SystemClock().NowUnixSeconds(); }

// A client for the cluster the flags name, and the namespace to use there.
struct Session {
  std::unique_ptr<kube::Client> client;
  std::string ns;
};

StatusOr<Session> Connect(const ClusterFlags& flags) {
  StatusOr<KubeconfigFile> file =
      FindKubeconfig(flags.kubeconfig, std::getenv("KUBECONFIG"), std::getenv("HOME"));
  if (!file.ok()) return file.status();
  StatusOr<kube::KubeConfig> config = LoadClusterConfig(*file, flags);
  if (!config.ok()) return config.status();
  StatusOr<std::unique_ptr<kube::Client>> client = kube::Client::Create(*config, {});
  if (!client.ok()) return InvalidArgumentError(file->origin + ": " + client.status().message());
  return Session{std::move(*client), EffectiveNamespace(flags, *config)};
}

int List(Session& session, bool all_namespaces) {
  std::string ns = all_namespaces ? "" : session.ns;
  StatusOr<nlohmann::json> sweeps = ListSweeps(*session.client, ns);
  if (!sweeps.ok()) return Fail(sweeps.status());
  if (sweeps->empty()) {
    // As kubectl get says it, on stderr: a script reading stdout sees no rows.
    std::fprintf(stderr, "No resources found%s.\n",
                 all_namespaces ? "" : (" in " + ns + " namespace").c_str());
    return 0;
  }
  std::fputs(SweepListTable(*sweeps, all_namespaces, Now()).c_str(), stdout);
  return 0;
}

int Trials(Session& session, const std::string& name) {
  StatusOr<ReportInput> input = ReadSweep(*session.client, session.ns, name, Now());
  if (!input.ok()) return Fail(input.status());
  StatusOr<std::string> view = TrialsView(input->spec, input->events);
  if (!view.ok()) return Fail(view.status());
  std::fputs(view->c_str(), stdout);
  return 0;
}

struct TopOptions {
  std::string name;
  double interval_seconds = 2;
  bool once = false;
};

// Sleeps `seconds`, returning early on Ctrl-C.
void SleepUnlessInterrupted(double seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_interrupted && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// One frame with --once or when stdout is no terminal; otherwise the frame redrawn every
// interval until Ctrl-C or the sweep's end. A failed read keeps the last frame on screen and is
// retried, unless the sweep is gone or its records do not replay.
int Top(Session& session, const TopOptions& options) {
  bool live = !options.once && isatty(STDOUT_FILENO);
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigaction(SIGINT, &action, nullptr);
  std::string last_frame;
  while (true) {
    StatusOr<ReportInput> input = ReadSweep(*session.client, session.ns, options.name, Now());
    StatusOr<std::string> frame = input.ok() ? TopFrame(*input) : input.status();
    if (!live) {
      if (!frame.ok()) return Fail(frame.status());
      std::fputs(frame->c_str(), stdout);
      return 0;
    }
    std::string heading =
        "every " + FormatNumber("%g", options.interval_seconds) + "s, Ctrl-C quits\n";
    if (frame.ok()) {
      last_frame = *frame;
    } else {
      StatusCode code = frame.status().code();
      if (code == StatusCode::kNotFound || code == StatusCode::kInvalidArgument) {
        return Fail(frame.status());
      }
      heading += "error: " + frame.status().message() + " (retrying)\n";
    }
    // Cursor home, clear the screen, then the frame.
    std::printf("\x1b[H\x1b[2J%s\n%s", heading.c_str(), last_frame.c_str());
    std::fflush(stdout);
    if (input.ok() && SweepEnded(input->status)) return 0;
    SleepUnlessInterrupted(options.interval_seconds);
    if (g_interrupted) return 0;
  }
}

struct ReportOptions {
  std::string name;
  std::string output;
  std::string png;
};

int Report(Session& session, const ReportOptions& options) {
  StatusOr<ReportInput> input = ReadSweep(*session.client, session.ns, options.name, Now());
  if (!input.ok()) return Fail(input.status());
  if (Status written = WriteReport(*input, options.output, options.png); !written.ok()) {
    return Fail(written);
  }
  std::printf("%s: report of budgetsweep \"%s\" in namespace %s (%zu events)\n",
              options.output.c_str(), options.name.c_str(), session.ns.c_str(),
              input->events.size());
  return 0;
}

}  // namespace
}  // namespace bsw::kubectl

int main(int argc, char** argv) {
  using bsw::kubectl::kExitUsage;
  CLI::App app{
      "kubectl bsw: BudgetSweeps on the cluster of your kubeconfig (the kubectl plugin "
      "kubectl-bsw). It only reads: sweeps, their status and their BudgetSweepTrial records."};
  app.name("kubectl bsw");
  app.require_subcommand(1);
  // The cluster flags are accepted before or after the command, as kubectl takes them.
  app.fallthrough();
  app.set_version_flag("--version", std::string("kubectl-bsw ") + BSW_VERSION);

  bsw::kubectl::ClusterFlags flags;
  app.add_option("--kubeconfig", flags.kubeconfig,
                 "kubeconfig file (default: $KUBECONFIG, of which only the first file of a "
                 "colon-separated list is read, else ~/.kube/config)");
  app.add_option("--context", flags.context,
                 "kubeconfig context to use (default: its current-context)");
  app.add_option("-n,--namespace", flags.namespace_name,
                 "namespace (default: the context's namespace, else default)");

  bool all_namespaces = false;
  CLI::App* ls_cmd = app.add_subcommand(
      "ls",
      "List the sweeps: phase, budget used+reserved/total, best value and trial, "
      "running/created trials, age");
  ls_cmd->add_flag("-A,--all-namespaces", all_namespaces, "List the sweeps of every namespace");

  std::string trials_name;
  CLI::App* trials_cmd = app.add_subcommand(
      "trials",
      "One row per trial (phase and reason, highest rung reached, its value, parameters), then "
      "the end of the output of each failed or diverged trial");
  trials_cmd->add_option("NAME", trials_name, "The BudgetSweep")->required();

  bsw::kubectl::TopOptions top;
  CLI::App* top_cmd = app.add_subcommand(
      "top",
      "The live view of `budgetsweep run`, from the cluster: budget, trial counts, rungs, best, "
      "running trials and recent failures, redrawn until Ctrl-C or the sweep's end");
  top_cmd->add_option("NAME", top.name, "The BudgetSweep")->required();
  top_cmd->add_option("--interval", top.interval_seconds, "Seconds between redraws")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  top_cmd->add_flag("--once", top.once,
                    "Print one frame and exit (also what happens when stdout is no terminal)");

  bsw::kubectl::ReportOptions report;
  CLI::App* report_cmd = app.add_subcommand(
      "report", "Write the sweep's report: one self-contained HTML file with its charts");
  report_cmd->add_option("NAME", report.name, "The BudgetSweep")->required();
  report_cmd->add_option("-o,--output", report.output, "HTML file to write")->required();
  report_cmd->add_option("--png", report.png,
                         "Also write the main chart (best objective against device-hours) as PNG");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }
  bsw::StatusOr<bsw::kubectl::Session> session = bsw::kubectl::Connect(flags);
  if (!session.ok()) return bsw::kubectl::Fail(session.status());
  if (*ls_cmd) return bsw::kubectl::List(*session, all_namespaces);
  if (*trials_cmd) return bsw::kubectl::Trials(*session, trials_name);
  if (*top_cmd) return bsw::kubectl::Top(*session, top);
  return bsw::kubectl::Report(*session, report);
}
