// budgetsweep-trainer: trains one sweep trial (see trainer-image/README.md), or with `export`
// writes Fashion-MNIST out as an image folder. Exit codes: 0 done, paused or stopped by SIGTERM
// with a checkpoint; 2 bad input; 3 diverged; 1 anything else.

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <variant>

#include "trainer-image/export.h"
#include "trainer-image/options.h"
#include "trainer-image/trainer.h"

namespace {

std::atomic<bool> stop_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void RequestStop(int) { stop_requested.store(true); }

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = RequestStop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

// libgomp reads its wait policy when it loads, before main. Its default, spinning at every
// barrier, makes intra-op threads that share cores with loader threads or other trials run
// several times slower (bench/results/trainer.md, "Threads"), so unless the environment chose a
// policy the trainer restarts itself once with passive waiting. If exec fails, it carries on.
void PreferPassiveOpenMpWaiting(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) {
    return;
  }
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  execv("/proc/self/exe", argv);
}

// In a Kubernetes container the kubelet mounts this file (the default terminationMessagePath) and
// makes what it holds the container's termination message. Written here, a failure's reason
// reaches the operator whole: the fallback to the log's tail can miss a last line the runtime
// had not written yet when the container exited.
constexpr const char* kTerminationLog = "/dev/termination-log";

// Prints `message` as the trainer's last word; a failure (non-zero `code`) also goes to the
// termination log when there is one (never created elsewhere).
int Finish(const std::string& message, int code) {
  std::fprintf(stderr, "budgetsweep-trainer: %s\n", message.c_str());
  if (code != bsw::trainer::kExitOk) {
    if (std::FILE* log = std::fopen(kTerminationLog, "r+"); log != nullptr) {
      std::fprintf(log, "budgetsweep-trainer: %s\n", message.c_str());
      std::fclose(log);
    }
  }
  return code;
}

int RunCommand(int argc, char** argv) {
  bsw::StatusOr<bsw::trainer::Command> command =
      bsw::trainer::ParseCommandLine(argc, argv, bsw::trainer::BuildDescription());
  if (!command.ok()) return Finish(command.status().message(), bsw::trainer::kExitBadInput);
  if (const auto* help = std::get_if<bsw::trainer::HelpRequested>(&*command)) {
    std::fputs(help->text.c_str(), stdout);
    return bsw::trainer::kExitOk;
  }
  if (const auto* export_options = std::get_if<bsw::trainer::ExportOptions>(&*command)) {
    bsw::Status status = bsw::trainer::ExportImageFolder(*export_options);
    if (!status.ok()) {
      const bool bad_input = status.code() == bsw::StatusCode::kInvalidArgument ||
                             status.code() == bsw::StatusCode::kNotFound;
      return Finish(status.message(),
                    bad_input ? bsw::trainer::kExitBadInput : bsw::trainer::kExitInternal);
    }
    return bsw::trainer::kExitOk;
  }
  const auto& options = std::get<bsw::trainer::TrainOptions>(*command);
  InstallStopHandlers();
  bsw::trainer::TrainOutcome outcome = bsw::trainer::Train(options, stop_requested);
  if (options.summary_json && !outcome.summary_json.empty()) {
    std::printf("%s\n", outcome.summary_json.c_str());
    std::fflush(stdout);
  }
  return Finish(outcome.message, outcome.exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  PreferPassiveOpenMpWaiting(argv);
  try {
    return RunCommand(argc, argv);
  } catch (const std::exception& e) {
    return Finish(std::string("internal error: ") + e.what(), bsw::trainer::kExitInternal);
  }
}
