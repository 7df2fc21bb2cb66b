// budgetsweep-collect: runs a training script and serves the values it prints as the trainer
// contract's metrics, so that any script joins a sweep unchanged. Usage: options.h (kUsage).

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "contract/trainer_contract.h"
#include "operator/collect/collector.h"
#include "operator/collect/file_tail.h"
#include "operator/collect/line_parser.h"
#include "operator/collect/metrics_server.h"
#include "operator/collect/options.h"

namespace {

int BadInput(const std::string& error) {
  std::fprintf(stderr, "budgetsweep-collect: %s\n%s", error.c_str(), bsw::collect::kUsage);
  return bsw::kExitBadInput;
}

// The trial directory's real path, or "" with *error naming the variable.
std::string RealTrialDir(const std::string& trial_dir, std::string* error) {
  char real[PATH_MAX];
  if (realpath(trial_dir.c_str(), real) == nullptr) {
    *error = std::string(bsw::kEnvTrialDir) + "=" + trial_dir + ": " + std::strerror(errno);
    return "";
  }
  return real;
}

// --install=DIR: copies this program into DIR as budgetsweep-collect, executable by all. On a
// cluster an init container does so into an emptyDir the trainer's container then runs it from.
int Install(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path target = fs::path(dir) / "budgetsweep-collect";
  std::error_code ec;
  fs::copy_file("/proc/self/exe", target, fs::copy_options::overwrite_existing, ec);
  if (!ec) {
    fs::permissions(target,
                    fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                        fs::perms::others_read | fs::perms::others_exec,
                    ec);
  }
  if (ec) {
    std::fprintf(stderr, "budgetsweep-collect: --install=%s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return bsw::kExitInternal;
  }
  return bsw::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace bsw::collect;
  if (argc == 2 && std::string_view(argv[1]).starts_with(kInstallOption)) {
    return Install(argv[1] + std::strlen(kInstallOption));
  }
  auto options = ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
  if (!options.value && options.error.empty()) {
    std::fputs(kUsage, stdout);
    return bsw::kExitOk;
  }
  if (!options.value) return BadInput(options.error);
  auto env = ReadEnvironment(std::getenv, options.value->source);
  if (!env.value) return BadInput(env.error);
  std::string error;
  std::optional<LineParser> parser = LineParser::Create(options.value->parser, &error);
  if (!parser) return BadInput(error);
  std::unique_ptr<FileTail> tail;
  if (options.value->source == Source::kFile) {
    std::string trial_dir = RealTrialDir(env.value->trial_dir, &error);
    if (trial_dir.empty()) return BadInput(error);
    tail = std::make_unique<FileTail>(trial_dir, options.value->path);
  }
  std::unique_ptr<MetricsServer> server;
  if (env.value->metrics_port) {
    server = MetricsServer::Listen(env.value->metrics_host, *env.value->metrics_port, &error);
    if (!server) {
      std::fprintf(stderr, "budgetsweep-collect: %s\n", error.c_str());
      return bsw::kExitInternal;
    }
    std::fprintf(stderr, "budgetsweep-collect: serving metrics on %s:%u\n",
                 env.value->metrics_host.c_str(), static_cast<unsigned>(server->port()));
  }
  // The command serves nothing itself: the port is this program's (an SDK script run so would
  // otherwise try to bind it too).
  unsetenv(bsw::kEnvMetricsPort);
  unsetenv(bsw::kEnvMetricsHost);
  Collector collector(std::move(*options.value), std::move(*env.value), std::move(*parser),
                      std::move(server), std::move(tail));
  return collector.Run();
}
