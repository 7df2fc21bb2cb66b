#ifndef BSW_CORE_RFC3339_H_
#define BSW_CORE_RFC3339_H_

#include <optional>
#include <string>

namespace bsw {

// Formats unix seconds as RFC 3339 in UTC, the way the Kubernetes API writes times: metav1.Time,
// "2026-12-02T09:00:15Z" (the fraction dropped), or with `microseconds` metav1.MicroTime,
// "2026-12-02T09:00:15.123456Z". The one formatter of times for status, events, leases and logs.
std::string Rfc3339(double unix_seconds, bool microseconds = false);

// Unix seconds of an RFC 3339 time as the Kubernetes API writes it (metav1.Time and MicroTime)
// and Rfc3339 writes it: "2024-05-01T12:00:00Z", with or without fractional seconds, with "Z" or
// a "+hh:mm"/"-hh:mm" offset. The one parser of times; nullopt for anything else, an impossible
// date included.
std::optional<double> ParseRfc3339(const std::string& text);

}  // namespace bsw

#endif  // BSW_CORE_RFC3339_H_
