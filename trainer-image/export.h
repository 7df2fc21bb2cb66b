#ifndef BSW_TRAINER_EXPORT_H_
#define BSW_TRAINER_EXPORT_H_

#include "base/status.h"
#include "trainer-image/options.h"

namespace bsw::trainer {

// Writes Fashion-MNIST as an image folder that `--dataset image-folder` reads:
//   out/dataset.json            {"channels": 1, "classes": 10}
//   out/train.csv, out/test.csv lines "train/00042.jpg,label"
//   out/train/*, out/test/*     options.size-pixel JPEG or PNG files
// Errors name the flag or file.
Status ExportImageFolder(const ExportOptions& options);

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_EXPORT_H_
