#ifndef BSW_TESTS_TRAINER_SCRATCH_DIR_H_
#define BSW_TESTS_TRAINER_SCRATCH_DIR_H_

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace bsw::trainer::testing {

// A fresh, empty directory under the system temp directory, named after `name` and this process,
// removed with everything in it when the test binary exits.
inline std::filesystem::path ScratchDir(const std::string& name) {
  struct RemovedAtExit {
    std::vector<std::filesystem::path> dirs;
    ~RemovedAtExit() {
      std::error_code ignored;  // a test that left a file unreadable must not fail the exit
      for (const std::filesystem::path& dir : dirs) std::filesystem::remove_all(dir, ignored);
    }
  };
  static RemovedAtExit scratch;
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("bsw_trainer_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  scratch.dirs.push_back(dir);
  return dir;
}

}  // namespace bsw::trainer::testing

#endif  // BSW_TESTS_TRAINER_SCRATCH_DIR_H_
