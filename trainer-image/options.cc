#include "trainer-image/options.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include "contract/trainer_contract.h"

namespace bsw::trainer {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// Makes a non-empty environment variable the default of `option`, and says so in its help; an
// explicit flag still wins.
void EnvDefault(CLI::Option* option, const char* name) {
  option->description(option->get_description() + " (env " + name + ")");
  if (!Env(name).empty()) option->envname(name);
}

// Epoch counts may arrive as "9" or "9.0" from a runner that formats resources as numbers.
Status ParseEpochCount(const std::string& flag, const std::string& text, int* out) {
  if (text.empty()) return OkStatus();
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(value) || value < 0 ||
      value != std::floor(value) || value > 1e6) {
    return InvalidArgumentError(flag + ": expected a whole number of epochs, got '" + text + "'");
  }
  *out = static_cast<int>(value);
  return OkStatus();
}

// The non-empty items of a comma-separated list.
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

StatusOr<std::vector<int>> ParseMilestones(const std::string& text) {
  std::vector<int> milestones;
  for (const std::string& item : SplitList(text)) {
    int epoch = 0;
    Status status = ParseEpochCount(kEnvMilestones, item, &epoch);
    if (!status.ok()) return status;
    milestones.push_back(epoch);
  }
  return milestones;
}

Status Require(bool condition, const std::string& message) {
  return condition ? OkStatus() : InvalidArgumentError(message);
}

Status Validate(const TrainOptions& o) {
  for (const Status& s : {
           Require(o.dataset == "fashion-mnist" || o.dataset == "image-folder",
                   "--dataset: expected fashion-mnist or image-folder, got '" + o.dataset + "'"),
           Require(o.model == "mlp" || o.model == "cnn2" || o.model == "resnet",
                   "--model: expected mlp, cnn2 or resnet, got '" + o.model + "'"),
           Require(o.precision == "auto" || o.precision == "bf16" || o.precision == "fp16" ||
                       o.precision == "fp32",
                   "--precision: expected auto, bf16, fp16 or fp32, got '" + o.precision + "'"),
           Require(o.optimizer == "adamw" || o.optimizer == "sgd",
                   "--optimizer: expected adamw or sgd, got '" + o.optimizer + "'"),
           Require(o.lr_scaling == "none" || o.lr_scaling == "linear",
                   "--lr-scaling: expected none or linear, got '" + o.lr_scaling + "'"),
           Require(o.device == "auto" || o.device == "cpu" || o.device == "cuda",
                   "--device: expected auto, cpu or cuda, got '" + o.device + "'"),
           Require(std::isfinite(o.width) && o.width >= 0.125 && o.width <= 16,
                   "--width: must be between 0.125 and 16"),
           Require(o.epochs >= 1, "--epochs: must be at least 1"),
           Require(o.until <= o.epochs, "--until: must not exceed --epochs (" +
                                            std::to_string(o.epochs) + "), got " +
                                            std::to_string(o.until)),
           Require(o.batch_size >= 1, "--batch-size: must be at least 1"),
           Require(o.train_limit >= 0, "--train-limit: must not be negative"),
           Require(o.validation_size >= 1, "--validation-size: must be at least 1"),
           Require(o.eval_limit >= 0, "--eval-limit: must not be negative"),
           Require(o.image_size >= 8 && o.image_size % 4 == 0 && o.image_size <= 1024,
                   "--image-size: must be a multiple of 4 between 8 and 1024"),
           Require(o.workers >= 0 && o.workers <= 256, "--workers: must be between 0 and 256"),
           Require(o.prefetch >= 0 && o.prefetch <= 1024, "--prefetch: must be between 0 and 1024"),
           Require(o.threads >= 0 && o.threads <= 1024, "--threads: must be between 0 and 1024"),
           Require(o.accumulation_steps >= 1, "--accumulation-steps: must be at least 1"),
           Require(std::isfinite(o.lr) && o.lr > 0, "--lr: must be a positive number"),
           Require(std::isfinite(o.weight_decay) && o.weight_decay >= 0,
                   "--weight-decay: must not be negative"),
           Require(std::isfinite(o.momentum) && o.momentum >= 0 && o.momentum < 1,
                   "--momentum: must be in [0, 1)"),
           Require(
               std::isfinite(o.warmup_fraction) && o.warmup_fraction >= 0 && o.warmup_fraction < 1,
               "--warmup-fraction: must be in [0, 1)"),
           Require(
               std::isfinite(o.lr_floor_ratio) && o.lr_floor_ratio >= 0 && o.lr_floor_ratio <= 1,
               "--lr-floor-ratio: must be in [0, 1]"),
           Require(o.reference_batch >= 1, "--reference-batch: must be at least 1"),
           Require(o.metrics_port >= -1 && o.metrics_port <= 65535,
                   "--metrics-port: must be -1 (off), 0 (any free port) or a port number"),
           Require(std::isfinite(o.linger_seconds) && o.linger_seconds >= 0,
                   "--linger-seconds: must not be negative"),
           Require(o.profile_steps >= 0, "--profile-steps: must not be negative"),
           Require(o.probe_steps >= 0 && o.probe_steps <= 100000,
                   "--probe-steps: must be between 0 and 100000"),
           Require(o.exploit_dir.empty() || o.exploit_at >= 1,
                   "--exploit-at: --exploit-dir needs the epoch of its snapshot, at least 1"),
           Require(o.exploit_dir.empty() || !o.checkpoint_dir.empty(),
                   "--exploit-dir: needs a --checkpoint-dir of this trial's own"),
       }) {
    if (!s.ok()) return s;
  }
  if (!o.params_json.empty() &&
      nlohmann::json::parse(o.params_json, nullptr, false).is_discarded()) {
    return InvalidArgumentError(std::string(kEnvParams) + ": not valid JSON");
  }
  return OkStatus();
}

// Flag values that need parsing beyond what CLI11 does.
struct TrainFlagTexts {
  std::string epochs;
  std::string until;
  std::string exploit_at;
  std::string mutable_flags;
};

void AddTrainFlags(CLI::App& app, TrainOptions& o, TrainFlagTexts& texts) {
  app.add_option("--dataset", o.dataset, "fashion-mnist | image-folder");
  app.add_option(
      "--data-dir", o.data_dir,
      "dataset directory (default: /usr/share/datasets/fashion-mnist for fashion-mnist)");
  app.add_option("--train-limit", o.train_limit, "use the first N training samples (0: all)");
  app.add_option("--validation-size", o.validation_size,
                 "samples held out from the end of the training split for validation");
  app.add_option("--eval-limit", o.eval_limit,
                 "evaluate at most N validation and N test samples (0: all)");
  app.add_option("--image-size", o.image_size, "model input side in pixels (image-folder)");
  app.add_option("--model", o.model, "mlp | cnn2 | resnet");
  app.add_option("--width", o.width,
                 "multiplies the width of every layer of the model (channels, hidden units)");
  EnvDefault(app.add_option("--epochs", texts.epochs, "total epochs; the LR schedule spans them")
                 ->default_str("10"),
             kEnvMaxResource);
  EnvDefault(app.add_option("--until", texts.until,
                            "train to this epoch, checkpoint and exit 0 (default: --epochs)"),
             kEnvUntil);
  app.add_option("--batch-size", o.batch_size, "micro-batch size");
  app.add_option("--workers", o.workers, "loader worker threads (0: load on the training thread)");
  app.add_option("--prefetch", o.prefetch, "batches prepared ahead of the training thread");
  app.add_option("--threads", o.threads, "intra-op threads (0: cores available)");
  app.add_option("--precision", o.precision, "auto | bf16 | fp16 | fp32");
  app.add_option("--accumulation-steps", o.accumulation_steps, "micro-batches per optimizer step");
  app.add_option("--optimizer", o.optimizer, "adamw | sgd");
  app.add_option("--lr", o.lr, "peak learning rate (before --lr-scaling)");
  app.add_option("--weight-decay", o.weight_decay, "decoupled (adamw) or L2 (sgd) weight decay");
  app.add_option("--momentum", o.momentum, "SGD momentum");
  app.add_option("--warmup-fraction", o.warmup_fraction,
                 "fraction of all optimizer steps spent in linear warmup");
  app.add_option("--lr-floor-ratio", o.lr_floor_ratio,
                 "cosine decay ends at this fraction of the peak learning rate");
  app.add_option("--lr-scaling", o.lr_scaling,
                 "none | linear (lr x batch-size x accumulation-steps / reference-batch)");
  app.add_option("--reference-batch", o.reference_batch, "batch size that --lr refers to");
  app.add_option("--seed", o.seed, "seed for initialization, sample order and augmentation");
  app.add_option("--device", o.device, "auto | cpu | cuda");
  EnvDefault(app.add_option("--checkpoint-dir", o.checkpoint_dir,
                            "resume from and write checkpoints here"),
             kEnvCheckpointDir);
  EnvDefault(app.add_flag("--keep-snapshots", o.keep_snapshots,
                          "at --until also write snapshot-<epochs>.pt, a copy of the checkpoint "
                          "that is never overwritten"),
             kEnvSnapshots);
  EnvDefault(app.add_option("--exploit-dir", o.exploit_dir,
                            "start from another trial's snapshot in this checkpoint directory, "
                            "unless this trial's checkpoint already did"),
             kEnvExploitDir);
  EnvDefault(
      app.add_option("--exploit-at", texts.exploit_at, "epoch of the --exploit-dir snapshot"),
      kEnvExploitAt);
  EnvDefault(app.add_option("--mutable", texts.mutable_flags,
                            "comma-separated flags, without dashes, that may differ from the "
                            "exploited snapshot's"),
             kEnvMutable);
  EnvDefault(app.add_option("--metrics-host", o.metrics_host, "metrics bind address"),
             kEnvMetricsHost);
  EnvDefault(app.add_option("--metrics-port", o.metrics_port,
                            "metrics port; 0 picks a free one and prints it; -1 disables"),
             kEnvMetricsPort);
  app.add_option("--linger-seconds", o.linger_seconds,
                 "keep serving metrics this long after the last evaluation");
  app.add_flag("--summary-json", o.summary_json, "print one JSON summary line at exit");
  app.add_option("--profile-steps", o.profile_steps,
                 "write a Chrome trace of the first N steps to --profile-out");
  app.add_option("--profile-out", o.profile_out, "Chrome trace path for --profile-steps");
  app.add_option("--probe-steps", o.probe_steps,
                 "probe mode: measure samples/s and data wait over N optimizer steps after a "
                 "warm-up, without evaluating or checkpointing, then linger and exit 0");
}

void AddExportFlags(CLI::App& app, ExportOptions& o) {
  app.add_option("--data-dir", o.data_dir, "Fashion-MNIST idx directory");
  app.add_option("--out", o.out_dir, "output directory")->required();
  app.add_option("--size", o.size, "output image side in pixels");
  app.add_option("--format", o.format, "jpeg | png");
  app.add_option("--quality", o.quality, "JPEG quality (1-100)");
  app.add_option("--limit", o.limit, "export the first N training and N test samples (0: all)");
}

Status ValidateExport(const ExportOptions& o) {
  for (const Status& s : {
           Require(o.size >= 8 && o.size <= 4096, "--size: must be between 8 and 4096"),
           Require(o.format == "jpeg" || o.format == "png",
                   "--format: expected jpeg or png, got '" + o.format + "'"),
           Require(o.quality >= 1 && o.quality <= 100, "--quality: must be between 1 and 100"),
           Require(o.limit >= 0, "--limit: must not be negative"),
       }) {
    if (!s.ok()) return s;
  }
  return OkStatus();
}

// CLI11 messages can span lines; the contract is one line.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

StatusOr<Command> ParseCommandLine(int argc, const char* const* argv,
                                   const std::string& version_text) {
  CLI::App app("budgetsweep-trainer: trains one sweep trial and exposes its metrics",
               "budgetsweep-trainer");
  // A repeated flag takes its last value, so parameters appended by the sweep runner override
  // the same flag in the pod template's arguments.
  app.option_defaults()->always_capture_default()->multi_option_policy(
      CLI::MultiOptionPolicy::TakeLast);
  app.set_version_flag("--version", version_text);
  TrainOptions train;
  TrainFlagTexts texts;
  AddTrainFlags(app, train, texts);
  ExportOptions export_options;
  CLI::App* export_command =
      app.add_subcommand("export", "write Fashion-MNIST out as a JPEG/PNG image folder");
  export_command->option_defaults()->always_capture_default();
  AddExportFlags(*export_command, export_options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return Command(HelpRequested{app.help()});
  } catch (const CLI::CallForVersion&) {
    return Command(HelpRequested{version_text + "\n"});
  } catch (const CLI::ParseError& e) {
    return InvalidArgumentError(OneLine(e.what()));
  }
  if (export_command->parsed()) {
    Status status = ValidateExport(export_options);
    if (!status.ok()) return status;
    return Command(export_options);
  }
  for (const Status& s : {ParseEpochCount("--epochs", texts.epochs, &train.epochs),
                          ParseEpochCount("--until", texts.until, &train.until),
                          ParseEpochCount("--exploit-at", texts.exploit_at, &train.exploit_at)}) {
    if (!s.ok()) return s;
  }
  if (train.until == 0) train.until = train.epochs;
  train.mutable_flags = SplitList(texts.mutable_flags);
  train.sweep = Env(kEnvSweep);
  train.trial = Env(kEnvTrial);
  train.params_json = Env(kEnvParams);
  StatusOr<std::vector<int>> milestones = ParseMilestones(Env(kEnvMilestones));
  if (!milestones.ok()) return milestones.status();
  train.milestones = *milestones;
  Status status = Validate(train);
  if (!status.ok()) return status;
  return Command(train);
}

}  // namespace bsw::trainer
