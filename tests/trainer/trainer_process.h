#ifndef BSW_TESTS_TRAINER_TRAINER_PROCESS_H_
#define BSW_TESTS_TRAINER_TRAINER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace bsw::trainer::testing {

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A running budgetsweep-trainer whose stdout and stderr go to files. Killed if still running on
// destruction.
class TrainerProcess {
 public:
  // `env` entries ("NAME=value") are added to this process's environment.
  explicit TrainerProcess(const std::vector<std::string>& args,
                          const std::vector<std::string>& env = {});
  ~TrainerProcess();
  TrainerProcess(const TrainerProcess&) = delete;
  TrainerProcess& operator=(const TrainerProcess&) = delete;

  std::string StdoutSoFar() const;
  std::string StderrSoFar() const;
  void Signal(int signal) const;
  ProcessResult Wait();

 private:
  pid_t pid_ = -1;
  std::string out_path_;
  std::string err_path_;
};

ProcessResult RunTrainer(const std::vector<std::string>& args,
                         const std::vector<std::string>& env = {});

// ScratchDir as a string: a fresh, empty directory, removed when the test binary exits.
std::string FreshDir(const std::string& name);

// Flags for a run that takes about a second per epoch on one thread.
std::vector<std::string> SmallRunFlags();

// The value of "key" in a one-line JSON summary printed by --summary-json, as raw JSON text.
std::string SummaryField(const std::string& out, const std::string& key);

}  // namespace bsw::trainer::testing

#endif  // BSW_TESTS_TRAINER_TRAINER_PROCESS_H_
