#ifndef BSW_TRAINER_CHECKPOINT_H_
#define BSW_TRAINER_CHECKPOINT_H_

#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
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
  // The exploit this trial's run started from, as ExploitOrigin names it; "" when it started
  // from scratch (and in checkpoints written before exploits existed).
  std::string origin;
};

// The paths of the checkpoint and of the snapshot at `epochs_completed` in checkpoint directory
// `dir`.
std::string CheckpointPath(const std::string& dir);
std::string SnapshotPath(const std::string& dir, int epochs_completed);

// How a run that took the snapshot of checkpoint directory `exploit_dir` at `epochs_completed`
// records that in TrainState::origin.
std::string ExploitOrigin(const std::string& exploit_dir, int epochs_completed);

// A flag whose value differs between a checkpoint and the run that loads it.
struct FlagChange {
  std::string flag;
  std::string written;  // "?" when the checkpoint lacks the flag
  std::string now;
};

// The flags of `now` whose value in `written` (TrainState::config of a checkpoint) differs, in
// flag order. A flag that checkpoints written before it existed lack counts as its value then
// (`--width` 1).
std::vector<FlagChange> ChangedFlags(const std::map<std::string, std::string>& written,
                                     const std::map<std::string, std::string>& now);

enum class Snapshot { kNone, kKeep };

// Writes the checkpoint to CheckpointPath(`dir`) atomically (temporary file, fsync, rename), with
// the global CPU generator's state. With Snapshot::kKeep the same bytes go first, just as
// atomically, to SnapshotPath(`dir`, state.epochs_completed), so a checkpoint at a milestone
// implies its snapshot.
[[nodiscard]] Status SaveCheckpoint(const std::string& dir, Net& model,
                                    torch::optim::Optimizer& optimizer, const TrainState& state,
                                    Snapshot snapshot);

// A checkpoint file read into memory but not yet loaded into a model.
class StoredCheckpoint {
 public:
  // Reads `path`, placing its tensors on `device`: nullopt when there is no such file,
  // InvalidArgument naming it when it is corrupt.
  static StatusOr<std::optional<StoredCheckpoint>> Read(const std::string& path,
                                                        torch::Device device);

  // TrainState::origin and TrainState::config of the run that wrote it.
  const std::string& origin() const { return origin_; }
  const std::map<std::string, std::string>& config() const { return config_; }

  // Loads the checkpoint into model and optimizer, restores the generator and returns the state
  // to continue from, whose config is `config`. A flag of `config` (TrainState::config of this run)
  // whose written value differs yields InvalidArgument naming the flag and the file, before the
  // model is touched, unless `mutable_flags` (names with dashes) holds it. In LibTorch 2.x the
  // optimizer's param-group options are the writer's afterwards.
  StatusOr<TrainState> Load(const std::map<std::string, std::string>& config,
                            const std::set<std::string>& mutable_flags, Net& model,
                            torch::optim::Optimizer& optimizer);

 private:
  StoredCheckpoint(std::string path, torch::serialize::InputArchive archive,
                   std::map<std::string, std::string> config, std::string origin);

  std::string path_;
  torch::serialize::InputArchive archive_;
  std::map<std::string, std::string> config_;
  std::string origin_;
};

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_CHECKPOINT_H_
