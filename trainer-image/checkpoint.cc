#include "trainer-image/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fcntl.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

namespace bsw::trainer {
namespace {

torch::Tensor DoubleVector(const std::vector<double>& values) {
  return torch::tensor(c10::ArrayRef<double>(values), torch::kDouble);
}

std::vector<double> ToVector(const torch::Tensor& tensor) {
  const torch::Tensor t = tensor.to(torch::kCPU, torch::kDouble).contiguous();
  return std::vector<double>(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
}

torch::Tensor Bytes(const std::string& text) {
  return torch::tensor(
      c10::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
      torch::kUInt8);
}

std::string ToString(const torch::Tensor& tensor) {
  const torch::Tensor t = tensor.cpu().contiguous();
  return std::string(reinterpret_cast<const char*>(t.data_ptr<uint8_t>()),
                     static_cast<size_t>(t.numel()));
}

Status SyncPath(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return UnavailableError(path + ": cannot open to sync");
  const int result = ::fsync(fd);
  ::close(fd);
  return result == 0 ? OkStatus() : UnavailableError(path + ": fsync failed");
}

std::string EncodeConfig(const std::map<std::string, std::string>& config) {
  std::string out;
  for (const auto& [key, value] : config) out += key + "=" + value + "\n";
  return out;
}

std::map<std::string, std::string> DecodeConfig(const std::string& text) {
  std::map<std::string, std::string> config;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = text.find('\n', begin);
    const std::string line = text.substr(begin, end - begin);
    const size_t equals = line.find('=');
    if (equals != std::string::npos) config[line.substr(0, equals)] = line.substr(equals + 1);
    begin = end == std::string::npos ? text.size() : end + 1;
  }
  return config;
}

// Flags that joined TrainState::config after checkpoints were written without them, with the
// value such a checkpoint was written with.
const std::map<std::string, std::string>& ConfigAddedLater() {
  // Written as the trainer writes doubles there (%.17g).
  static const auto* const added = new std::map<std::string, std::string>{{"--width", "1"}};
  return *added;
}

// Makes the complete file `temporary` the file `path` in `dir`: fsync, rename, fsync the directory,
// so that a reader sees either the old file or the new one and the rename survives a crash.
Status Publish(const std::string& temporary, const std::string& path, const std::string& dir) {
  Status synced = SyncPath(temporary, O_RDONLY);
  if (!synced.ok()) return synced;
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) return UnavailableError(path + ": cannot rename into place: " + error.message());
  return SyncPath(dir, O_RDONLY | O_DIRECTORY);
}

std::string TemporaryPath(const std::string& path) {
  return path + ".tmp-" + std::to_string(::getpid());
}

// A fresh tensor per key: reading into a defined tensor would resize its storage in place.
torch::Tensor ReadTensor(torch::serialize::InputArchive& archive, const char* key) {
  torch::Tensor tensor;
  archive.read(key, tensor);
  return tensor;
}

Status Corrupt(const std::string& path, const std::exception& e) {
  std::string reason = e.what();
  reason = reason.substr(0, reason.find('\n'));
  return InvalidArgumentError(path + ": corrupt or incompatible checkpoint (" + reason + ")");
}

}  // namespace

std::string CheckpointPath(const std::string& dir) {
  return (std::filesystem::path(dir) / "checkpoint.pt").string();
}

std::string SnapshotPath(const std::string& dir, int epochs_completed) {
  return (std::filesystem::path(dir) / ("snapshot-" + std::to_string(epochs_completed) + ".pt"))
      .string();
}

std::string ExploitOrigin(const std::string& exploit_dir, int epochs_completed) {
  return exploit_dir + "@" + std::to_string(epochs_completed);
}

std::vector<FlagChange> ChangedFlags(const std::map<std::string, std::string>& written,
                                     const std::map<std::string, std::string>& now) {
  std::vector<FlagChange> changes;
  for (const auto& [flag, value] : now) {
    std::string before = "?";
    if (auto it = written.find(flag); it != written.end()) {
      before = it->second;
    } else if (auto later = ConfigAddedLater().find(flag); later != ConfigAddedLater().end()) {
      before = later->second;
    }
    if (before != value) changes.push_back({flag, before, value});
  }
  return changes;
}

Status SaveCheckpoint(const std::string& dir, Net& model, torch::optim::Optimizer& optimizer,
                      const TrainState& state, Snapshot snapshot) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return UnavailableError("--checkpoint-dir: " + dir + ": " + error.message());
  const std::string path = CheckpointPath(dir);
  const std::string temporary = TemporaryPath(path);
  try {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model_archive;
    model.save(model_archive);
    archive.write("model", model_archive);
    torch::serialize::OutputArchive optimizer_archive;
    optimizer.save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
    archive.write("epochs_completed", torch::tensor(int64_t{state.epochs_completed}));
    archive.write("next_micro_batch", torch::tensor(state.next_micro_batch));
    archive.write("optimizer_steps", torch::tensor(state.optimizer_steps));
    archive.write("loss_scale", torch::tensor(state.loss_scale, torch::kDouble));
    archive.write("loss_scale_finite_streak", torch::tensor(state.loss_scale_finite_streak));
    archive.write("epoch_loss_sum", torch::tensor(state.epoch_loss_sum, torch::kDouble));
    archive.write("epoch_samples", torch::tensor(state.epoch_samples));
    archive.write("train_loss", DoubleVector(state.train_loss));
    archive.write("validation_accuracy", DoubleVector(state.validation_accuracy));
    archive.write("validation_loss", DoubleVector(state.validation_loss));
    archive.write("config", Bytes(EncodeConfig(state.config)));
    // Absent, rather than empty, when there is none, as in checkpoints older than the key.
    if (!state.origin.empty()) archive.write("origin", Bytes(state.origin));
    {
      auto generator = at::detail::getDefaultCPUGenerator();
      std::lock_guard<std::mutex> lock(generator.mutex());
      archive.write("cpu_rng_state", generator.get_state());
    }
    archive.save_to(temporary);
  } catch (const std::exception& e) {
    std::filesystem::remove(temporary, error);
    return UnavailableError(temporary + ": cannot write checkpoint (" + e.what() + ")");
  }
  if (snapshot == Snapshot::kKeep) {
    const std::string snapshot_path = SnapshotPath(dir, state.epochs_completed);
    const std::string snapshot_temporary = TemporaryPath(snapshot_path);
    std::filesystem::copy_file(temporary, snapshot_temporary,
                               std::filesystem::copy_options::overwrite_existing, error);
    if (error) return UnavailableError(snapshot_temporary + ": cannot write: " + error.message());
    Status published = Publish(snapshot_temporary, snapshot_path, dir);
    if (!published.ok()) return published;
  }
  return Publish(temporary, path, dir);
}

StoredCheckpoint::StoredCheckpoint(std::string path, torch::serialize::InputArchive archive,
                                   std::map<std::string, std::string> config, std::string origin)
    : path_(std::move(path)),
      archive_(std::move(archive)),
      config_(std::move(config)),
      origin_(std::move(origin)) {}

StatusOr<std::optional<StoredCheckpoint>> StoredCheckpoint::Read(const std::string& path,
                                                                 torch::Device device) {
  if (!std::filesystem::exists(path)) return std::optional<StoredCheckpoint>();
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path, device);
    std::map<std::string, std::string> config =
        DecodeConfig(ToString(ReadTensor(archive, "config")));
    torch::Tensor origin;
    const bool has_origin = archive.try_read("origin", origin);
    return std::optional<StoredCheckpoint>(StoredCheckpoint(
        path, std::move(archive), std::move(config), has_origin ? ToString(origin) : ""));
  } catch (const std::exception& e) {
    return Corrupt(path, e);
  }
}

StatusOr<TrainState> StoredCheckpoint::Load(const std::map<std::string, std::string>& config,
                                            const std::set<std::string>& mutable_flags, Net& model,
                                            torch::optim::Optimizer& optimizer) {
  // Checked first: a model of another shape would load into this one's tensors.
  for (const FlagChange& change : ChangedFlags(config_, config)) {
    if (mutable_flags.contains(change.flag)) continue;
    return InvalidArgumentError(path_ + ": written with " + change.flag + "=" + change.written +
                                ", not " + change.now);
  }
  TrainState state;
  state.config = config;
  state.origin = origin_;
  try {
    torch::serialize::InputArchive model_archive;
    archive_.read("model", model_archive);
    model.load(model_archive);
    torch::serialize::InputArchive optimizer_archive;
    archive_.read("optimizer", optimizer_archive);
    optimizer.load(optimizer_archive);
    state.epochs_completed =
        static_cast<int>(ReadTensor(archive_, "epochs_completed").item<int64_t>());
    state.next_micro_batch = ReadTensor(archive_, "next_micro_batch").item<int64_t>();
    state.optimizer_steps = ReadTensor(archive_, "optimizer_steps").item<int64_t>();
    state.loss_scale = ReadTensor(archive_, "loss_scale").item<double>();
    state.loss_scale_finite_streak =
        ReadTensor(archive_, "loss_scale_finite_streak").item<int64_t>();
    state.epoch_loss_sum = ReadTensor(archive_, "epoch_loss_sum").item<double>();
    state.epoch_samples = ReadTensor(archive_, "epoch_samples").item<int64_t>();
    state.train_loss = ToVector(ReadTensor(archive_, "train_loss"));
    state.validation_accuracy = ToVector(ReadTensor(archive_, "validation_accuracy"));
    state.validation_loss = ToVector(ReadTensor(archive_, "validation_loss"));
    const torch::Tensor rng_state = ReadTensor(archive_, "cpu_rng_state");
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(rng_state.cpu());
  } catch (const std::exception& e) {
    return Corrupt(path_, e);
  }
  return state;
}

}  // namespace bsw::trainer
