#ifndef BSW_CORE_RFC3339_H_
#define BSW_CORE_RFC3339_H_

#include <optional>
#include <string>

namespace bsw {

// Formats unix seconds as RFC 3339 in UTC, the way the Kubernetes API writes times: metav1.Time,
// "2026-12-02T09:00:15Z" (the fraction dropped), or with `microseconds` metav1.MicroTime,
// "2026-12-02T09:00:15.123456Z". The one formatter of times for status, events, leases and logs.
std::string Rfc3339(double unix_seconds, bool microseconds = false);

// Unix seconds of an API server timestamp in UTC without a fraction ("2026-12-02T09:00:15Z"), as
// Rfc3339 writes it; nullopt for anything else.
std::optional<double> ParseRfc3339(const std::string& text);

}  // namespace bsw

#endif  // BSW_CORE_RFC3339_H_
