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

constexpr const char* kFileName = "checkpoint.pt";

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

Status CheckConfig(const std::map<std::string, std::string>& saved,
                   const std::map<std::string, std::string>& now, const std::string& dir) {
  for (const auto& [flag, value] : now) {
    const std::string* written = nullptr;
    if (auto it = saved.find(flag); it != saved.end()) {
      written = &it->second;
    } else if (auto later = ConfigAddedLater().find(flag); later != ConfigAddedLater().end()) {
      written = &later->second;
    }
    if (written == nullptr || *written != value) {
      return InvalidArgumentError("--checkpoint-dir: " + dir + " holds a checkpoint written with " +
                                  flag + "=" + (written == nullptr ? "?" : *written) + ", not " +
                                  value);
    }
  }
  return OkStatus();
}

}  // namespace

Status SaveCheckpoint(const std::string& dir, Net& model, torch::optim::Optimizer& optimizer,
                      const TrainState& state) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return UnavailableError("--checkpoint-dir: " + dir + ": " + error.message());
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
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
  Status synced = SyncPath(temporary, O_RDONLY);
  if (!synced.ok()) return synced;
  std::filesystem::rename(temporary, path, error);
  if (error)
    return UnavailableError(path + ": cannot rename checkpoint into place: " + error.message());
  return SyncPath(dir, O_RDONLY | O_DIRECTORY);
}

StatusOr<std::optional<TrainState>> LoadCheckpoint(const std::string& dir, torch::Device device,
                                                   const std::map<std::string, std::string>& config,
                                                   Net& model, torch::optim::Optimizer& optimizer) {
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  if (!std::filesystem::exists(path)) return std::optional<TrainState>();
  TrainState state;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path, device);
    // A fresh tensor per key: reading into a defined tensor would resize its storage in place.
    auto read = [&archive](const char* key) {
      torch::Tensor tensor;
      archive.read(key, tensor);
      return tensor;
    };
    // Checked first: a model of another shape would load into this one's tensors.
    state.config = DecodeConfig(ToString(read("config")));
    Status same = CheckConfig(state.config, config, dir);
    if (!same.ok()) return same;
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    model.load(model_archive);
    torch::serialize::InputArchive optimizer_archive;
    archive.read("optimizer", optimizer_archive);
    optimizer.load(optimizer_archive);
    state.epochs_completed = static_cast<int>(read("epochs_completed").item<int64_t>());
    state.next_micro_batch = read("next_micro_batch").item<int64_t>();
    state.optimizer_steps = read("optimizer_steps").item<int64_t>();
    state.loss_scale = read("loss_scale").item<double>();
    state.loss_scale_finite_streak = read("loss_scale_finite_streak").item<int64_t>();
    state.epoch_loss_sum = read("epoch_loss_sum").item<double>();
    state.epoch_samples = read("epoch_samples").item<int64_t>();
    state.train_loss = ToVector(read("train_loss"));
    state.validation_accuracy = ToVector(read("validation_accuracy"));
    state.validation_loss = ToVector(read("validation_loss"));
    const torch::Tensor rng_state = read("cpu_rng_state");
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    generator.set_state(rng_state.cpu());
  } catch (const std::exception& e) {
    std::string reason = e.what();
    reason = reason.substr(0, reason.find('\n'));
    return InvalidArgumentError(path + ": corrupt or incompatible checkpoint (" + reason + ")");
  }
  return std::optional<TrainState>(std::move(state));
}

}  // namespace bsw::trainer
