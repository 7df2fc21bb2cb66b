#include "trainer-image/nvml.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace bsw::trainer {
namespace {

// The few NVML declarations used, from nvml.h (stable C ABI).
using NvmlReturn = int;
using NvmlDevice = void*;
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
constexpr NvmlReturn kNvmlSuccess = 0;

class NvmlProbe final : public UtilizationProbe {
 public:
  ~NvmlProbe() override {
    if (shutdown_ != nullptr) shutdown_();
    dlclose(library_);
  }

  static std::unique_ptr<UtilizationProbe> Open() {
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) return nullptr;
    auto probe = std::unique_ptr<NvmlProbe>(new NvmlProbe(library));
    if (!probe->Init()) return nullptr;
    return probe;
  }

  std::optional<double> Utilization() override {
    NvmlUtilization utilization{};
    if (get_utilization_(device_, &utilization) != kNvmlSuccess) return std::nullopt;
    return utilization.gpu / 100.0;
  }

 private:
  explicit NvmlProbe(void* library) : library_(library) {}

  template <typename F>
  bool Symbol(const char* name, F* out) {
    *out = reinterpret_cast<F>(dlsym(library_, name));
    return *out != nullptr;
  }

  bool Init() {
    using InitFn = NvmlReturn (*)();
    InitFn init = nullptr;
    NvmlReturn (*by_index)(unsigned int, NvmlDevice*) = nullptr;
    NvmlReturn (*by_uuid)(const char*, NvmlDevice*) = nullptr;
    if (!Symbol("nvmlInit_v2", &init) || !Symbol("nvmlShutdown", &shutdown_) ||
        !Symbol("nvmlDeviceGetHandleByIndex_v2", &by_index) ||
        !Symbol("nvmlDeviceGetHandleByUUID", &by_uuid) ||
        !Symbol("nvmlDeviceGetUtilizationRates", &get_utilization_)) {
      shutdown_ = nullptr;
      return false;
    }
    if (init() != kNvmlSuccess) {
      shutdown_ = nullptr;
      return false;
    }
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    std::string first = visible == nullptr ? "0" : std::string(visible);
    first = first.substr(0, first.find(','));
    if (first.rfind("GPU-", 0) == 0 || first.rfind("MIG-", 0) == 0) {
      return by_uuid(first.c_str(), &device_) == kNvmlSuccess;
    }
    char* end = nullptr;
    const unsigned long index = std::strtoul(first.c_str(), &end, 10);
    if (first.empty() || *end != '\0') return false;
    return by_index(static_cast<unsigned int>(index), &device_) == kNvmlSuccess;
  }

  void* library_;
  NvmlDevice device_ = nullptr;
  NvmlReturn (*shutdown_)() = nullptr;
  NvmlReturn (*get_utilization_)(NvmlDevice, NvmlUtilization*) = nullptr;
};

}  // namespace

std::unique_ptr<UtilizationProbe> OpenNvmlProbe() { return NvmlProbe::Open(); }

}  // namespace bsw::trainer
