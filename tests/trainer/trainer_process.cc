#include "tests/trainer/trainer_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/trainer/scratch_dir.h"

namespace bsw::trainer::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string NextOutputPath(const char* suffix) {
  static std::atomic<int> counter{0};
  return (std::filesystem::temp_directory_path() /
          ("bsw_trainer_proc_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) +
           suffix))
      .string();
}

}  // namespace

TrainerProcess::TrainerProcess(const std::vector<std::string>& args,
                               const std::vector<std::string>& env)
    : out_path_(NextOutputPath(".out")), err_path_(NextOutputPath(".err")) {
  pid_ = ::fork();
  if (pid_ == 0) {
    const int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    for (const std::string& entry : env) ::putenv(const_cast<char*>(entry.c_str()));
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(BSW_TRAINER_BINARY));
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execv(BSW_TRAINER_BINARY, argv.data());
    ::_exit(127);
  }
}

TrainerProcess::~TrainerProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  std::filesystem::remove(out_path_);
  std::filesystem::remove(err_path_);
}

std::string TrainerProcess::StdoutSoFar() const { return ReadAll(out_path_); }
std::string TrainerProcess::StderrSoFar() const { return ReadAll(err_path_); }

void TrainerProcess::Signal(int signal) const { ::kill(pid_, signal); }

ProcessResult TrainerProcess::Wait() {
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  ProcessResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = ReadAll(out_path_);
  result.err = ReadAll(err_path_);
  return result;
}

ProcessResult RunTrainer(const std::vector<std::string>& args,
                         const std::vector<std::string>& env) {
  return TrainerProcess(args, env).Wait();
}

std::string FreshDir(const std::string& name) { return ScratchDir(name).string(); }

std::vector<std::string> SmallRunFlags() {
  return {"--train-limit=512", "--validation-size=256", "--eval-limit=256",   "--batch-size=64",
          "--threads=1",       "--workers=1",           "--linger-seconds=0", "--summary-json"};
}

std::string SummaryField(const std::string& out, const std::string& key) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    const nlohmann::json summary = nlohmann::json::parse(line, nullptr, false);
    if (!summary.is_discarded() && summary.is_object() && summary.contains(key)) {
      return summary[key].dump();
    }
  }
  return "";
}

}  // namespace bsw::trainer::testing
