#ifndef BSW_TRAINER_TRAINER_H_
#define BSW_TRAINER_TRAINER_H_

#include <atomic>
#include <string>

#include "contract/trainer_exit_codes.h"
#include "trainer-image/options.h"

namespace bsw::trainer {

// Process exit codes of the trainer contract, shared with the operator that reads them.
using bsw::kExitBadInput;
using bsw::kExitDiverged;
using bsw::kExitInternal;
using bsw::kExitOk;

struct TrainOutcome {
  int exit_code = kExitOk;
  std::string message;       // one line for stderr
  std::string summary_json;  // one JSON line; empty when training never started
};

// Trains (or resumes) as `options` say. Returns when training reaches --until, diverges, fails,
// or, after `stop_requested` becomes true, at the next optimizer step, checkpointed. Progress goes
// to stderr; the metrics port line to stdout.
TrainOutcome Train(const TrainOptions& options, const std::atomic<bool>& stop_requested);

// "budgetsweep-trainer <version> (LibTorch <version>, CPU|CUDA <version>)": what --version prints,
// so that an image says which build it carries.
std::string BuildDescription();

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_TRAINER_H_
