#ifndef BSW_TRAINER_OPTIONS_H_
#define BSW_TRAINER_OPTIONS_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"

namespace bsw::trainer {

// Everything `budgetsweep-trainer` (training mode) is told on its command line or through the
// BUDGETSWEEP_* environment. Names match the flags, which match search-space parameter names.
struct TrainOptions {
  std::string dataset = "fashion-mnist";  // fashion-mnist | image-folder
  std::string data_dir;                   // empty: the Debian package's location
  int64_t train_limit = 0;                // 0: all training samples
  int64_t validation_size = 5000;         // held out from the end of the training split
  int64_t eval_limit = 0;                 // 0: evaluate every validation and test sample
  int image_size = 28;                    // model input side; image-folder samples are resized
  std::string model = "cnn2";             // mlp | cnn2 | resnet
  double width = 1.0;                     // multiplies every layer's width (model.h)
  int epochs = 10;
  int until = 0;  // 0: train to `epochs`
  int64_t batch_size = 128;
  int workers = 1;
  int prefetch = 4;
  int threads = 0;                 // 0: cores available
  std::string precision = "auto";  // auto | bf16 | fp16 | fp32
  int accumulation_steps = 1;
  std::string optimizer = "adamw";  // adamw | sgd
  double lr = 1e-3;
  double weight_decay = 0.01;
  double momentum = 0.9;
  double warmup_fraction = 0.05;
  double lr_floor_ratio = 0.01;
  std::string lr_scaling = "none";  // none | linear
  int64_t reference_batch = 128;
  uint64_t seed = 0;
  std::string device = "auto";  // auto | cpu | cuda
  std::string checkpoint_dir;
  // Population-based training (README, "Exploiting another trial").
  bool keep_snapshots = false;
  std::string exploit_dir;                 // empty: no exploit
  int exploit_at = 0;                      // epochs; set whenever exploit_dir is
  std::vector<std::string> mutable_flags;  // flag names without dashes
  std::string metrics_host = "0.0.0.0";
  int metrics_port = -1;  // -1: no endpoint; 0: a free port, printed
  double linger_seconds = 1.0;
  bool summary_json = false;
  int profile_steps = 0;
  int probe_steps = 0;  // > 0: probe mode (README, "Probe mode")
  std::string profile_out = "budgetsweep-trainer-trace.json";
  // Labels and informational values from the environment.
  std::string sweep;
  std::string trial;
  std::string params_json;
  std::vector<int> milestones;
};

// `budgetsweep-trainer export`: writes Fashion-MNIST out as an image folder.
struct ExportOptions {
  std::string data_dir;  // empty: the Debian package's location
  std::string out_dir;
  int size = 96;
  std::string format = "jpeg";  // jpeg | png
  int quality = 90;
  int64_t limit = 0;  // 0: every sample
};

// --help or --version: the text to print on stdout before exiting 0.
struct HelpRequested {
  std::string text;
};

using Command = std::variant<TrainOptions, ExportOptions, HelpRequested>;

// Parses argv (flags win over the BUDGETSWEEP_* environment) and validates every value.
// A bad value yields InvalidArgument with a one-line message naming the flag. `--version` prints
// `version_text`.
StatusOr<Command> ParseCommandLine(int argc, const char* const* argv,
                                   const std::string& version_text = "budgetsweep-trainer");

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_OPTIONS_H_
