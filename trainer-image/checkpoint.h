#ifndef BSW_TRAINER_CHECKPOINT_H_
#define BSW_TRAINER_CHECKPOINT_H_

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "trainer-image/model.h"

namespace bsw::trainer {

// Where training stands: enough, with the model and optimizer, to continue exactly.
struct TrainState {
  int epochs_completed = 0;
  int64_t next_micro_batch = 0;  // within epoch epochs_completed (0-based)
  int64_t optimizer_steps = 0;   // scheduled steps so far, applied or skipped
  double loss_scale = 0;
  int64_t loss_scale_finite_streak = 0;
  double epoch_loss_sum = 0;  // of the epoch in progress
  int64_t epoch_samples = 0;
  std::vector<double> train_loss;  // per completed epoch
  std::vector<double> validation_accuracy;
  std::vector<double> validation_loss;
  // Flag values that must not change across a resume, by flag name.
  std::map<std::string, std::string> config;
};

// Writes the checkpoint to `dir`/checkpoint.pt atomically (temporary file, fsync, rename), with
// the global CPU generator's state.
[[nodiscard]] Status SaveCheckpoint(const std::string& dir, Net& model,
                                    torch::optim::Optimizer& optimizer, const TrainState& state);

// Loads `dir`/checkpoint.pt into model and optimizer (whose tensors live on `device`) and restores
// the generator; nullopt when there is none. A corrupt file yields InvalidArgument naming it; a
// checkpoint written with a flag value other than `config` (TrainState::config of this run) yields
// InvalidArgument naming the flag, before the model is touched. A flag that checkpoints written
// before it existed lack counts as its value then (`--width` 1).
StatusOr<std::optional<TrainState>> LoadCheckpoint(const std::string& dir, torch::Device device,
                                                   const std::map<std::string, std::string>& config,
                                                   Net& model, torch::optim::Optimizer& optimizer);

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_CHECKPOINT_H_
