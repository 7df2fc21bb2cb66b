#ifndef BSW_ADAPTERS_PROMETHEUS_HTTP_FETCH_H_
#define BSW_ADAPTERS_PROMETHEUS_HTTP_FETCH_H_

#include <string>

#include "base/status.h"
#include "operator/adapters/prometheus/bounded_body.h"

namespace bsw::prom {

// Fetches the body of `url` (http://host[:port][/path], an IP address or a host name) with one
// HTTP/1.1 GET that accepts gzip, for a trainer's metrics endpoint, which is untrusted code, and
// hands it to `sink` a decompressed piece at a time as it arrives: no part of the answer is held
// beyond its cap. The status line and headers together are capped at 64 KiB (kMaxLineBytes), a
// chunk-size line too, and the body at the caps of BoundedBody (Content-Length, chunked, or up to
// the end of the connection).
// `timeout_seconds` bounds the connect and each wait for the endpoint to take or send more bytes.
// Unavailable: unreachable, timed out, closed early, or a status other than 200 (named).
// InvalidArgument: a URL that is not http, a malformed response, corrupt gzip data, or an encoding
// other than gzip. ResourceExhausted: over a cap (named). These come before the sink's first
// error, which is returned otherwise.
[[nodiscard]] Status FetchMetricsBody(const std::string& url, double timeout_seconds,
                                      BodySink sink);

}  // namespace bsw::prom

#endif  // BSW_ADAPTERS_PROMETHEUS_HTTP_FETCH_H_
