#ifndef BSW_TRAINER_COMPAT_H_
#define BSW_TRAINER_COMPAT_H_

// The only place that knows which LibTorch it is built against: Debian's CPU LibTorch 1.13 here,
// the CUDA LibTorch 2.x of PyPI's torch wheel in the CUDA trainer image (BSW_TRAINER_CUDA).

#include <ATen/autocast_mode.h>
#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/version.h>

#include <string>

#define BSW_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||      \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

#ifdef BSW_TRAINER_CUDA
// The CUDA trainer is built against PyPI's torch wheel only: 2.7 is the first one built with the
// C++11 ABI of the Debian libraries it links, and its allocator statistics are device-generic.
#if !BSW_TORCH_AT_LEAST(2, 7)
#error "the CUDA trainer needs LibTorch 2.7 or newer"
#endif
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda.h>
#endif

namespace bsw::trainer::compat {

inline std::string LibTorchVersion() { return TORCH_VERSION; }

// The device runtime this build carries: "CPU", or "CUDA 13.2".
inline std::string DeviceRuntime() {
#ifdef BSW_TRAINER_CUDA
  return "CUDA " + std::to_string(CUDA_VERSION / 1000) + "." +
         std::to_string(CUDA_VERSION % 1000 / 10);
#else
  return "CPU";
#endif
}

// Enables autocast to `dtype` on `device` for the lifetime of the scope.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device, at::ScalarType dtype) : device_(device) {
    Set(true, dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    Set(false, std::nullopt);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  void Set(bool enabled, std::optional<at::ScalarType> dtype) {
#if BSW_TORCH_AT_LEAST(2, 4)
    if (dtype) at::autocast::set_autocast_dtype(device_, *dtype);
    at::autocast::set_autocast_enabled(device_, enabled);
#else
    if (device_ == c10::DeviceType::CUDA) {
      if (dtype) at::autocast::set_autocast_gpu_dtype(*dtype);
      at::autocast::set_enabled(enabled);
    } else {
      if (dtype) at::autocast::set_autocast_cpu_dtype(*dtype);
      at::autocast::set_cpu_enabled(enabled);
    }
#endif
  }

  c10::DeviceType device_;
};

inline bool CudaAvailable() { return torch::cuda::is_available(); }

// Whether the current CUDA device computes bf16 natively (compute capability 8.0 or newer).
inline bool CudaSupportsBf16() {
#ifdef BSW_TRAINER_CUDA
  return at::cuda::getCurrentDeviceProperties()->major >= 8;
#else
  return false;
#endif
}

// Bytes the caching allocator has handed out on the current CUDA device.
inline double CudaAllocatedBytes() {
#ifdef BSW_TRAINER_CUDA
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(c10::cuda::current_device());
  constexpr auto kAggregate = static_cast<size_t>(c10::CachingDeviceAllocator::StatType::AGGREGATE);
  return static_cast<double>(stats.allocated_bytes[kAggregate].current);
#else
  return 0;
#endif
}

}  // namespace bsw::trainer::compat

#endif  // BSW_TRAINER_COMPAT_H_
