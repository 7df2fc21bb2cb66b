#ifndef BSW_ADAPTERS_KUBE_TIMESTAMPS_H_
#define BSW_ADAPTERS_KUBE_TIMESTAMPS_H_

#include <chrono>
#include <string>

namespace bsw::kube {

// RFC 3339 in UTC as the API expects: metav1.Time ("2024-05-01T12:00:00Z") and, with
// `microseconds`, metav1.MicroTime ("2024-05-01T12:00:00.123456Z").
std::string FormatTime(std::chrono::system_clock::time_point time, bool microseconds = false);

}  // namespace bsw::kube

#endif  // BSW_ADAPTERS_KUBE_TIMESTAMPS_H_
