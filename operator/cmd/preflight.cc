#include "operator/cmd/preflight.h"

#include <filesystem>
#include <optional>
#include <system_error>

#include "operator/adapters/local/process.h"

namespace bsw {
namespace {

namespace fs = std::filesystem;

constexpr const char* kContainer = "spec.trial.template.spec.containers[0]";

// The value of `--flag` in `args` (as --flag=value or --flag value) and its index, last one wins
// as with the trainer's parser.
std::optional<std::pair<size_t, std::string>> FlagValue(const std::vector<std::string>& args,
                                                        const std::string& flag) {
  std::optional<std::pair<size_t, std::string>> found;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].starts_with(flag + "=")) {
      found = {i, args[i].substr(flag.size() + 1)};
    } else if (args[i] == flag && i + 1 < args.size()) {
      found = {i + 1, args[i + 1]};
    }
  }
  return found;
}

bool IsDirectory(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec);
}

}  // namespace

std::vector<std::string> Preflight(const SweepSpec& spec, const std::string& path,
                                   const std::string& default_fashion_mnist_dir) {
  std::vector<std::string> problems;
  const TrialContainer& c = spec.container;
  if (StatusOr<fs::path> program = local::ResolveProgram(c.command.at(0), path); !program.ok()) {
    bool searched = program.status().code() == StatusCode::kNotFound &&
                    c.command[0].find('/') == std::string::npos;
    problems.push_back(std::string(kContainer) + ".command[0]: " + program.status().message() +
                       (searched ? " (give its path, or put its directory on PATH)" : ""));
  }
  auto arg_field = [](size_t index) {
    return std::string(kContainer) + ".args[" + std::to_string(index) + "]";
  };
  std::optional<std::pair<size_t, std::string>> data_dir = FlagValue(c.args, "--data-dir");
  if (data_dir && !IsDirectory(data_dir->second)) {
    problems.push_back(arg_field(data_dir->first) + ": --data-dir " + data_dir->second +
                       ": no such directory");
  }
  std::optional<std::pair<size_t, std::string>> dataset = FlagValue(c.args, "--dataset");
  if (!data_dir && dataset && dataset->second == "fashion-mnist" &&
      !IsDirectory(default_fashion_mnist_dir)) {
    problems.push_back(
        arg_field(dataset->first) + ": --dataset=fashion-mnist needs " + default_fashion_mnist_dir +
        " (Debian's dataset-fashion-mnist; `make deps` installs it) or a --data-dir");
  }
  return problems;
}

}  // namespace bsw
