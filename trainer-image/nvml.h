#ifndef BSW_TRAINER_NVML_H_
#define BSW_TRAINER_NVML_H_

#include <memory>
#include <optional>

namespace bsw::trainer {

// GPU utilization through NVML, loaded with dlopen at run time so the trainer runs where the
// library is absent.
class UtilizationProbe {
 public:
  virtual ~UtilizationProbe() = default;
  // The fraction of the last sample period the device was busy, or nullopt on failure.
  virtual std::optional<double> Utilization() = 0;
};

// A probe for the first device in CUDA_VISIBLE_DEVICES (an index or a GPU-/MIG- UUID; device 0
// when unset), or nullptr when NVML cannot be loaded or the device not found.
std::unique_ptr<UtilizationProbe> OpenNvmlProbe();

}  // namespace bsw::trainer

#endif  // BSW_TRAINER_NVML_H_
