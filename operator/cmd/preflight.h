#ifndef BSW_CMD_PREFLIGHT_H_
#define BSW_CMD_PREFLIGHT_H_

#include <string>
#include <vector>

#include "operator/core/api.h"

namespace bsw {

// What `budgetsweep run` checks on this machine before any trial starts, so that a sweep that
// cannot run fails at once instead of as one failed trial after another:
//   - the trial command (containers[0].command[0]) resolves with `path` as PATH, as execvp would
//     resolve it, to an executable file;
//   - a `--data-dir` among the template's args names an existing directory;
//   - `--dataset=fashion-mnist` without a `--data-dir` needs the trainer's default directory,
//     `default_fashion_mnist_dir` (Debian's dataset-fashion-mnist).
// The directory budgetsweep-trainer reads Fashion-MNIST from without a --data-dir (the
// trainer's kDefaultFashionMnistDir; a unit test keeps the two equal). The operator image is
// built without the trainer's sources, so it keeps its own copy.
inline constexpr const char* kTrainerFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// Returns one line per problem, "<field>: <what is wrong>", empty when all is well.
std::vector<std::string> Preflight(const SweepSpec& spec, const std::string& path,
                                   const std::string& default_fashion_mnist_dir);

}  // namespace bsw

#endif  // BSW_CMD_PREFLIGHT_H_
