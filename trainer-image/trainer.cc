#include "trainer-image/trainer.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "trainer-image/checkpoint.h"
#include "trainer-image/compat.h"
#include "trainer-image/dataset.h"
#include "trainer-image/loader.h"
#include "trainer-image/metrics.h"
#include "trainer-image/model.h"
#include "trainer-image/nvml.h"
#include "trainer-image/schedule.h"
#include "trainer-image/stepper.h"
#include "trainer-image/system_info.h"

namespace bsw::trainer {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string Exact(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

struct Placement {
  torch::Device device = torch::kCPU;
  std::string precision;
  StepperConfig stepper;
  int threads = 1;
};

StatusOr<Placement> Place(const TrainOptions& o) {
  if (o.device == "cuda" && !compat::CudaAvailable()) {
    return InvalidArgumentError("--device: cuda requested but no CUDA device is available");
  }
  const bool cuda = o.device == "cuda" || (o.device == "auto" && compat::CudaAvailable());
  Placement placement;
  placement.device = cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  placement.precision = o.precision;
  if (placement.precision == "auto") {
    const bool bf16 = cuda ? compat::CudaSupportsBf16() : CpuSupportsBf16();
    placement.precision = bf16 ? "bf16" : (cuda ? "fp16" : "fp32");
  }
  if (placement.precision == "fp16" && !cuda) {
    return InvalidArgumentError("--precision: fp16 needs a CUDA device; use bf16 or fp32 on CPU");
  }
  placement.stepper.device = placement.device;
  if (placement.precision == "bf16") placement.stepper.autocast = torch::kBFloat16;
  if (placement.precision == "fp16") placement.stepper.autocast = torch::kHalf;
  placement.stepper.loss_scaling = placement.precision == "fp16";
  placement.threads = o.threads > 0 ? o.threads : CoresAvailable();
  return placement;
}

HostBuffer AllocatePinnedBuffer(int64_t image_floats, int64_t labels) {
  torch::Tensor images =
      torch::empty({image_floats}, torch::TensorOptions().dtype(torch::kFloat).pinned_memory(true));
  torch::Tensor label_tensor =
      torch::empty({labels}, torch::TensorOptions().dtype(torch::kLong).pinned_memory(true));
  HostBuffer buffer;
  buffer.images = images.data_ptr<float>();
  buffer.labels = label_tensor.data_ptr<int64_t>();
  buffer.owner = std::make_shared<std::pair<torch::Tensor, torch::Tensor>>(std::move(images),
                                                                           std::move(label_tensor));
  return buffer;
}

// The flags a resumed run must share with the run that wrote the checkpoint.
std::map<std::string, std::string> ResumeConfig(const TrainOptions& o, int64_t train_samples) {
  return {{"--dataset", o.dataset},
          {"--model", o.model},
          {"--width", Exact(o.width)},
          {"--image-size", std::to_string(o.image_size)},
          {"--train-limit", std::to_string(train_samples)},
          {"--epochs", std::to_string(o.epochs)},
          {"--batch-size", std::to_string(o.batch_size)},
          {"--accumulation-steps", std::to_string(o.accumulation_steps)},
          {"--optimizer", o.optimizer},
          {"--lr", Exact(o.lr)},
          {"--weight-decay", Exact(o.weight_decay)},
          {"--momentum", Exact(o.momentum)},
          {"--warmup-fraction", Exact(o.warmup_fraction)},
          {"--lr-floor-ratio", Exact(o.lr_floor_ratio)},
          {"--lr-scaling", o.lr_scaling},
          {"--reference-batch", std::to_string(o.reference_batch)},
          {"--seed", std::to_string(o.seed)}};
}

// Sets every param group's options from the flags. Loading an optimizer's state in LibTorch 2.x
// restores the options it was saved with, which are another trial's after an exploit.
void SetOptimizerFlags(const TrainOptions& o, torch::optim::Optimizer& optimizer) {
  for (auto& group : optimizer.param_groups()) {
    if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&group.options())) {
      sgd->lr(o.lr).momentum(o.momentum).weight_decay(o.weight_decay);
    } else if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&group.options())) {
      adamw->lr(o.lr).weight_decay(o.weight_decay);
    }
  }
}

std::unique_ptr<torch::optim::Optimizer> MakeOptimizer(const TrainOptions& o, Net& model) {
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  if (o.optimizer == "sgd") {
    optimizer =
        std::make_unique<torch::optim::SGD>(model.parameters(), torch::optim::SGDOptions(o.lr));
  } else {
    optimizer =
        std::make_unique<torch::optim::AdamW>(model.parameters(), torch::optim::AdamWOptions(o.lr));
  }
  SetOptimizerFlags(o, *optimizer);
  return optimizer;
}

// "--lr 0.1 -> 0.003, --weight-decay 0 -> 0.01", or "none".
std::string DescribeChanges(const std::vector<FlagChange>& changes) {
  std::string text;
  for (const FlagChange& change : changes) {
    if (!text.empty()) text += ", ";
    text += change.flag + " " + change.written + " -> " + change.now;
  }
  return text.empty() ? "none" : text;
}

struct Evaluation {
  double loss = 0;
  double accuracy = 0;
};

enum class Ending { kFinished, kStopped, kDiverged, kProbed };

class Session {
 public:
  Session(const TrainOptions& options, const std::atomic<bool>& stop_requested)
      : o_(options), stop_requested_(stop_requested), started_(Clock::now()) {}

  TrainOutcome Run() {
    Status status = Setup();
    if (!status.ok()) return Failure(status);
    if (o_.probe_steps > 0) return Probe();
    if (state_.epochs_completed >= o_.until) {
      Linger();
      return Outcome(kExitOk, "already at epoch " + std::to_string(state_.epochs_completed) +
                                  " of --until " + std::to_string(o_.until) + "; nothing to do");
    }
    StatusOr<Ending> ending = TrainEpochs();
    if (!ending.ok()) return Failure(ending.status());
    profile_.reset();
    switch (*ending) {
      case Ending::kDiverged:
        Linger();
        return Outcome(kExitDiverged, diverged_message_);
      case Ending::kStopped:
        return Stopped();
      case Ending::kFinished:
      case Ending::kProbed:
        break;
    }
    // The test set is for the finished run only: a run paused at a rung has no use for it, and
    // evaluating it there would cost each pause-mode segment a test pass.
    const bool paused = o_.until < o_.epochs;
    if (!paused) {
      StatusOr<Evaluation> test = Evaluate(*test_loader_, splits_.test->size());
      if (!test.ok()) return Failure(test.status());
      test_accuracy_ = test->accuracy;
      metrics_->SetObjective("test_accuracy", state_.epochs_completed, test->accuracy);
    }
    Linger();
    return Outcome(kExitOk, paused ? "paused at epoch " + std::to_string(o_.until) + " of " +
                                         std::to_string(o_.epochs) + " (--until)"
                                   : "finished " + std::to_string(o_.epochs) + " epochs");
  }

 private:
  Status Setup() {
    StatusOr<Placement> placement = Place(o_);
    if (!placement.ok()) return placement.status();
    placement_ = *placement;
    at::set_num_threads(placement_.threads);
    StatusOr<Splits> splits = OpenSplits(o_);
    if (!splits.ok()) return splits.status();
    splits_ = *splits;
    shape_ = splits_.train->shape();
    torch::manual_seed(o_.seed);
    StatusOr<std::shared_ptr<Net>> model =
        MakeModel(o_.model, shape_, splits_.num_classes, o_.width);
    if (!model.ok()) return model.status();
    model_ = *model;
    model_->to(placement_.device);
    optimizer_ = MakeOptimizer(o_, *model_);
    stepper_ = std::make_unique<Stepper>(model_, *optimizer_, placement_.stepper);
    micro_batches_ = (splits_.train->size() + o_.batch_size - 1) / o_.batch_size;
    const int64_t steps_per_epoch = StepsPerEpoch(micro_batches_, o_.accumulation_steps);
    schedule_.emplace(ScaledLearningRate(o_.lr, o_.lr_scaling == "linear", o_.batch_size,
                                         o_.accumulation_steps, o_.reference_batch),
                      o_.warmup_fraction, o_.lr_floor_ratio, steps_per_epoch * o_.epochs);
    state_.config = ResumeConfig(o_, splits_.train->size());
    state_.loss_scale = stepper_->loss_scale().scale();
    if (!o_.checkpoint_dir.empty() && o_.probe_steps == 0) {
      Status resumed = Resume();
      if (!resumed.ok()) return resumed;
    }
    ApplyMemoryFormat(*model_);
    Status served = StartMetrics();
    if (!served.ok()) return served;
    LoaderConfig train_config{o_.workers, o_.prefetch, o_.batch_size, AllocateHeapBuffer};
    if (placement_.device.is_cuda()) train_config.allocator = AllocatePinnedBuffer;
    LoaderConfig eval_config = train_config;
    train_loader_ = std::make_unique<Loader>(splits_.train, train_config);
    validation_loader_ = std::make_unique<Loader>(splits_.validation, eval_config);
    test_loader_ = std::make_unique<Loader>(splits_.test, eval_config);
    if (placement_.device.is_cuda()) nvml_ = OpenNvmlProbe();
    return OkStatus();
  }

  // Continues from this trial's checkpoint, if any; with --exploit-dir from the exploited
  // snapshot instead, unless this trial's checkpoint was itself written after that exploit.
  Status Resume() {
    StatusOr<std::optional<StoredCheckpoint>> own =
        StoredCheckpoint::Read(CheckpointPath(o_.checkpoint_dir), placement_.device);
    if (!own.ok()) return own.status();
    if (!o_.exploit_dir.empty()) {
      const std::string origin = ExploitOrigin(o_.exploit_dir, o_.exploit_at);
      if (!own->has_value() || (*own)->origin() != origin) return Exploit(origin);
    }
    if (!own->has_value()) return OkStatus();
    Status continued = ContinueFrom(**own, {});
    if (!continued.ok()) return continued;
    std::fprintf(stderr, "budgetsweep-trainer: resumed from %s at epoch %d, micro-batch %lld\n",
                 o_.checkpoint_dir.c_str(), state_.epochs_completed,
                 static_cast<long long>(state_.next_micro_batch));
    return OkStatus();
  }

  Status Exploit(const std::string& origin) {
    const std::string path = SnapshotPath(o_.exploit_dir, o_.exploit_at);
    StatusOr<std::optional<StoredCheckpoint>> snapshot =
        StoredCheckpoint::Read(path, placement_.device);
    if (!snapshot.ok()) return snapshot.status();
    if (!snapshot->has_value()) return InvalidArgumentError("--exploit-dir: no snapshot " + path);
    std::set<std::string> mutable_flags;
    for (const std::string& name : o_.mutable_flags) mutable_flags.insert("--" + name);
    const std::string changes = DescribeChanges(ChangedFlags((*snapshot)->config(), state_.config));
    Status continued = ContinueFrom(**snapshot, mutable_flags);
    if (!continued.ok()) return continued;
    state_.origin = origin;
    std::fprintf(stderr, "budgetsweep-trainer: exploited %s at epoch %d (changed: %s)\n",
                 path.c_str(), state_.epochs_completed, changes.c_str());
    return OkStatus();
  }

  Status ContinueFrom(StoredCheckpoint& checkpoint, const std::set<std::string>& mutable_flags) {
    StatusOr<TrainState> loaded =
        checkpoint.Load(state_.config, mutable_flags, *model_, *optimizer_);
    if (!loaded.ok()) return loaded.status();
    state_ = std::move(*loaded);
    SetOptimizerFlags(o_, *optimizer_);
    stepper_->loss_scale().Restore(state_.loss_scale, state_.loss_scale_finite_streak);
    return OkStatus();
  }

  Status StartMetrics() {
    MetricsInfo info{o_.sweep,
                     o_.trial,
                     placement_.precision,
                     placement_.device.str(),
                     o_.workers,
                     compat::LibTorchVersion()};
    if (o_.metrics_port < 0) {
      metrics_ = UnservedMetrics(info);
    } else {
      StatusOr<std::unique_ptr<ServedMetrics>> served =
          ServedMetrics::Start(o_.metrics_host, o_.metrics_port, info);
      if (!served.ok()) return served.status();
      serving_ = true;
      std::printf("budgetsweep-trainer: serving metrics on %s:%d\n", o_.metrics_host.c_str(),
                  (*served)->port());
      std::fflush(stdout);
      metrics_ = std::move(*served);
    }
    for (size_t i = 0; i < state_.validation_accuracy.size(); ++i) {
      const int epoch = static_cast<int>(i) + 1;
      metrics_->SetObjective("validation_accuracy", epoch, state_.validation_accuracy[i]);
      metrics_->SetObjective("validation_loss", epoch, state_.validation_loss[i]);
    }
    metrics_->SetResourceCompleted(state_.epochs_completed);
    PollDevice();
    return OkStatus();
  }

  void PollDevice() {
    metrics_->SetDeviceMemoryBytes(placement_.device.is_cuda() ? compat::CudaAllocatedBytes()
                                                               : ResidentSetBytes());
    if (nvml_) {
      if (std::optional<double> utilization = nvml_->Utilization()) {
        metrics_->SetAcceleratorUtilization(*utilization);
      }
    }
    last_poll_ = Clock::now();
  }

  std::pair<torch::Tensor, torch::Tensor> ToDevice(const Batch& batch) const {
    torch::Tensor images = torch::from_blob(
        batch.images, {batch.count, shape_.channels, shape_.side, shape_.side}, torch::kFloat);
    torch::Tensor labels = torch::from_blob(batch.labels, {batch.count}, torch::kLong);
    if (placement_.device.is_cuda()) {
      images = images.to(placement_.device, /*non_blocking=*/true);
      labels = labels.to(placement_.device, /*non_blocking=*/true);
    }
    return {ToModelLayout(*model_, images), labels};
  }

  // Probe mode: trains past a warm-up, then --probe-steps optimizer steps, across epochs if need
  // be, and reports samples/s and data wait over those steps alone. The warm-up covers the first
  // prefetch + 2 micro-batches, so batches the loader built ahead during start-up do not hide a
  // slow loader. No evaluation, no checkpoint.
  TrainOutcome Probe() {
    const int k = o_.accumulation_steps;
    probe_warmup_steps_ = (o_.prefetch + 2 + k - 1) / k;
    model_->train();
    while (true) {
      StatusOr<Ending> ending = TrainEpoch();
      if (!ending.ok()) return Failure(ending.status());
      if (*ending == Ending::kDiverged) {
        Linger();
        return Outcome(kExitDiverged, diverged_message_);
      }
      if (*ending == Ending::kStopped) return Outcome(kExitOk, "stopped by signal while probing");
      if (*ending == Ending::kProbed) break;
      ++state_.epochs_completed;
      state_.next_micro_batch = 0;
    }
    const double rate = static_cast<double>(run_samples_) / run_step_seconds_;
    const double wait = run_wait_seconds_ / run_step_seconds_;
    metrics_->SetSamplesPerSecond(rate);
    metrics_->SetDataWaitRatio(wait);
    PollDevice();
    metrics_->SetProbeMeasuredSteps(o_.probe_steps);
    std::fprintf(stderr,
                 "probe: %d optimizer steps after %lld warm-up steps: samples_per_second %.0f "
                 "data_wait_ratio %.3f\n",
                 o_.probe_steps, static_cast<long long>(probe_warmup_steps_), rate, wait);
    Linger();
    return Outcome(kExitOk, "probed " + std::to_string(o_.probe_steps) + " optimizer steps");
  }

  StatusOr<Ending> TrainEpochs() {
    if (o_.profile_steps > 0) {
      profile_ = std::make_unique<torch::autograd::profiler::RecordProfile>(o_.profile_out);
    }
    model_->train();
    while (state_.epochs_completed < o_.until) {
      if (stop_requested_.load()) return Ending::kStopped;
      StatusOr<Ending> ending = TrainEpoch();
      if (!ending.ok() || *ending != Ending::kFinished) return ending;
      StatusOr<Evaluation> validation = Evaluate(*validation_loader_, splits_.validation->size());
      if (!validation.ok()) return validation.status();
      FinishEpoch(*validation);
      if (!o_.checkpoint_dir.empty()) {
        const bool milestone = state_.epochs_completed == o_.until;
        Status saved = Save(milestone && o_.keep_snapshots ? Snapshot::kKeep : Snapshot::kNone);
        if (!saved.ok()) return saved;
      }
    }
    return Ending::kFinished;
  }

  // Trains the rest of epoch state_.epochs_completed; kFinished when its last micro-batch is done.
  StatusOr<Ending> TrainEpoch() {
    const int epoch = state_.epochs_completed;
    train_loader_->StartPass(EpochOrder(splits_.train->size(), o_.seed, epoch),
                             state_.next_micro_batch, /*augment=*/true,
                             o_.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch));
    epoch_wait_seconds_ = 0;
    epoch_step_seconds_ = 0;
    epoch_run_samples_ = 0;
    const int k = o_.accumulation_steps;
    while (true) {
      const Clock::time_point step_start = Clock::now();
      StatusOr<std::optional<Batch>> next = [&] {
        RECORD_USER_SCOPE("data_wait");
        return train_loader_->Next();
      }();
      const double wait_seconds = SecondsSince(step_start);
      if (!next.ok()) return next.status();
      if (!next->has_value()) break;
      const Batch& batch = **next;
      const int64_t mb = batch.index;
      const int64_t group_start = mb / k * k;
      const int64_t group_size = std::min<int64_t>(k, micro_batches_ - group_start);
      double loss = 0;
      {
        RECORD_USER_SCOPE("train_step");
        auto [images, labels] = ToDevice(batch);
        loss = stepper_->Accumulate(images, labels, static_cast<double>(group_size)).item<double>();
        if (!std::isfinite(loss)) return Diverged(loss, epoch, mb);
        if (mb + 1 == group_start + group_size) ApplyStep();
      }
      state_.next_micro_batch = mb + 1;
      state_.epoch_loss_sum += loss * static_cast<double>(batch.count);
      state_.epoch_samples += batch.count;
      RecordStep(batch.count, loss, wait_seconds, SecondsSince(step_start));
      if (mb + 1 == group_start + group_size && o_.probe_steps > 0) {
        // The run's figures restart after the warm-up, so they cover the probe steps alone.
        if (state_.optimizer_steps == probe_warmup_steps_) ResetRunFigures();
        if (state_.optimizer_steps >= probe_warmup_steps_ + o_.probe_steps) return Ending::kProbed;
      }
      if (mb + 1 == group_start + group_size && stop_requested_.load()) return Ending::kStopped;
    }
    return Ending::kFinished;
  }

  void ApplyStep() {
    const double lr = schedule_->LearningRate(state_.optimizer_steps);
    for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
    const bool applied = stepper_->Step();
    ++state_.optimizer_steps;
    state_.loss_scale = stepper_->loss_scale().scale();
    state_.loss_scale_finite_streak = stepper_->loss_scale().finite_streak();
    metrics_->SetLearningRate(lr);
    metrics_->AddOptimizerSteps(applied ? 1 : 0, applied ? 0 : 1);
    if (profile_ && ++profiled_steps_ >= o_.profile_steps) profile_.reset();
  }

  void RecordStep(int64_t samples, double loss, double wait_seconds, double step_seconds) {
    epoch_wait_seconds_ += wait_seconds;
    epoch_step_seconds_ += step_seconds;
    epoch_run_samples_ += samples;
    run_wait_seconds_ += wait_seconds;
    run_step_seconds_ += step_seconds;
    run_samples_ += samples;
    metrics_->SetLoss(loss);
    metrics_->AddSamples(samples);
    metrics_->SetSamplesPerSecond(static_cast<double>(epoch_run_samples_) / epoch_step_seconds_);
    metrics_->SetDataWaitRatio(epoch_wait_seconds_ / epoch_step_seconds_);
    if (SecondsSince(last_poll_) >= 1.0) PollDevice();
  }

  void ResetRunFigures() {
    run_wait_seconds_ = 0;
    run_step_seconds_ = 0;
    run_samples_ = 0;
  }

  Ending Diverged(double loss, int epoch, int64_t micro_batch) {
    metrics_->SetDiverged(true);
    std::ostringstream message;
    message << "diverged: training loss is " << loss << " at epoch " << epoch + 1
            << ", micro-batch " << micro_batch;
    diverged_message_ = message.str();
    return Ending::kDiverged;
  }

  void FinishEpoch(const Evaluation& validation) {
    const double train_loss =
        state_.epoch_samples > 0 ? state_.epoch_loss_sum / static_cast<double>(state_.epoch_samples)
                                 : 0.0;
    state_.train_loss.push_back(train_loss);
    state_.validation_accuracy.push_back(validation.accuracy);
    state_.validation_loss.push_back(validation.loss);
    ++state_.epochs_completed;
    state_.next_micro_batch = 0;
    state_.epoch_loss_sum = 0;
    state_.epoch_samples = 0;
    const int epoch = state_.epochs_completed;
    metrics_->SetObjective("validation_accuracy", epoch, validation.accuracy);
    metrics_->SetObjective("validation_loss", epoch, validation.loss);
    metrics_->SetResourceCompleted(epoch);
    PollDevice();
    std::fprintf(stderr,
                 "epoch %d/%d: train_loss %.4f validation_accuracy %.4f validation_loss %.4f "
                 "samples_per_second %.0f data_wait_ratio %.3f train_seconds %.2f\n",
                 epoch, o_.epochs, train_loss, validation.accuracy, validation.loss,
                 epoch_step_seconds_ > 0
                     ? static_cast<double>(epoch_run_samples_) / epoch_step_seconds_
                     : 0.0,
                 epoch_step_seconds_ > 0 ? epoch_wait_seconds_ / epoch_step_seconds_ : 0.0,
                 epoch_step_seconds_);
  }

  StatusOr<Evaluation> Evaluate(Loader& loader, int64_t size) {
    torch::NoGradGuard no_grad;
    model_->eval();
    loader.StartPass(SequentialOrder(size), 0, /*augment=*/false, 0);
    torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().device(placement_.device));
    torch::Tensor correct =
        torch::zeros({}, torch::TensorOptions().dtype(torch::kLong).device(placement_.device));
    while (true) {
      StatusOr<std::optional<Batch>> next = loader.Next();
      if (!next.ok()) {
        model_->train();
        return next.status();
      }
      if (!next->has_value()) break;
      auto [images, labels] = ToDevice(**next);
      torch::Tensor logits;
      {
        std::optional<compat::AutocastScope> autocast;
        if (placement_.stepper.autocast) {
          autocast.emplace(placement_.device.type(), *placement_.stepper.autocast);
        }
        logits = model_->forward(images).to(torch::kFloat);
      }
      loss_sum += torch::nn::functional::cross_entropy(
          logits, labels, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
      correct += logits.argmax(1).eq(labels).sum();
    }
    model_->train();
    const auto n = static_cast<double>(size);
    return Evaluation{loss_sum.item<double>() / n,
                      static_cast<double>(correct.item<int64_t>()) / n};
  }

  Status Save(Snapshot snapshot) {
    Status saved = SaveCheckpoint(o_.checkpoint_dir, *model_, *optimizer_, state_, snapshot);
    if (!saved.ok()) return Status(StatusCode::kUnavailable, saved.message());
    return OkStatus();
  }

  TrainOutcome Stopped() {
    if (o_.checkpoint_dir.empty()) {
      return Outcome(kExitOk, "stopped by signal at epoch " +
                                  std::to_string(state_.epochs_completed) +
                                  "; no --checkpoint-dir, so progress is not saved");
    }
    Status saved = Save(Snapshot::kNone);
    if (!saved.ok()) return Failure(saved);
    return Outcome(kExitOk, "stopped by signal; checkpointed at epoch " +
                                std::to_string(state_.epochs_completed) + ", micro-batch " +
                                std::to_string(state_.next_micro_batch));
  }

  // Keeps the endpoint up so a scraper sees the last values before the process exits; a stop
  // request ends it early.
  void Linger() const {
    if (!serving_) return;
    const Clock::time_point start = Clock::now();
    while (SecondsSince(start) < o_.linger_seconds && !stop_requested_.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  TrainOutcome Failure(const Status& status) {
    return Outcome(
        status.code() == StatusCode::kInvalidArgument || status.code() == StatusCode::kNotFound
            ? kExitBadInput
            : kExitInternal,
        status.message());
  }

  TrainOutcome Outcome(int exit_code, std::string message) {
    TrainOutcome outcome{exit_code, std::move(message), ""};
    if (!metrics_) return outcome;
    nlohmann::json summary = {
        {"epochs", state_.epochs_completed},
        {"samples_per_second",
         run_step_seconds_ > 0 ? static_cast<double>(run_samples_) / run_step_seconds_ : 0.0},
        {"data_wait_ratio", run_step_seconds_ > 0 ? run_wait_seconds_ / run_step_seconds_ : 0.0},
        {"objective", state_.validation_accuracy.empty()
                          ? nlohmann::json()
                          : nlohmann::json(state_.validation_accuracy.back())},
        {"test_accuracy", test_accuracy_ ? nlohmann::json(*test_accuracy_) : nlohmann::json()},
        {"train_loss", state_.train_loss},
        {"validation_accuracy", state_.validation_accuracy},
        {"validation_loss", state_.validation_loss},
        {"precision", placement_.precision},
        {"device", placement_.device.str()},
        {"workers", o_.workers},
        {"threads", placement_.threads},
        {"exit_code", exit_code},
        {"wall_seconds", SecondsSince(started_)},
        {"cpu_seconds", ProcessCpuSeconds()},
    };
    outcome.summary_json = summary.dump();
    return outcome;
  }

  const TrainOptions& o_;
  const std::atomic<bool>& stop_requested_;
  Clock::time_point started_;
  Clock::time_point last_poll_;
  Placement placement_;
  Splits splits_;
  SampleShape shape_;
  std::shared_ptr<Net> model_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<Stepper> stepper_;
  std::optional<WarmupCosineSchedule> schedule_;
  int64_t micro_batches_ = 0;
  TrainState state_;
  std::unique_ptr<TrainerMetrics> metrics_;
  bool serving_ = false;
  std::unique_ptr<UtilizationProbe> nvml_;
  std::unique_ptr<Loader> train_loader_;
  std::unique_ptr<Loader> validation_loader_;
  std::unique_ptr<Loader> test_loader_;
  std::unique_ptr<torch::autograd::profiler::RecordProfile> profile_;
  int profiled_steps_ = 0;
  int64_t probe_warmup_steps_ = 0;
  double epoch_wait_seconds_ = 0;
  double epoch_step_seconds_ = 0;
  int64_t epoch_run_samples_ = 0;
  double run_wait_seconds_ = 0;
  double run_step_seconds_ = 0;
  int64_t run_samples_ = 0;
  std::optional<double> test_accuracy_;
  std::string diverged_message_;
};

}  // namespace

TrainOutcome Train(const TrainOptions& options, const std::atomic<bool>& stop_requested) {
  try {
    return Session(options, stop_requested).Run();
  } catch (const std::exception& e) {
    std::string reason = e.what();
    return TrainOutcome{kExitInternal, "internal error: " + reason.substr(0, reason.find('\n')),
                        ""};
  }
}

std::string BuildDescription() {
  return std::string("budgetsweep-trainer ") + BSW_VERSION + " (LibTorch " +
         compat::LibTorchVersion() + ", " + compat::DeviceRuntime() + ")";
}

}  // namespace bsw::trainer
