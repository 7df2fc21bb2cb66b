#ifndef BSW_ADAPTERS_PROMETHEUS_BOUNDED_BODY_H_
#define BSW_ADAPTERS_PROMETHEUS_BOUNDED_BODY_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace bsw::prom {

// Caps on an HTTP response body from untrusted trainer code, as it comes over the wire and once
// decompressed. The chart's Prometheus scrapes of trial pods have the same decompressed cap
// (body_size_limit).
inline constexpr size_t kMaxBodyBytes = size_t{4} << 20;
inline constexpr size_t kMaxDecompressedBodyBytes = size_t{16} << 20;

// Receives each decompressed piece of a body, in order; an error stops the pieces.
using BodySink = std::function<Status(std::string_view piece)>;

// A response body taken in as it arrives and decompressed as it goes, each piece handed to a sink
// and counted against the caps, never held: a body that passes a cap fails at that point.
// A body whose sink fails is still read to its end within the caps, only counted, so that the
// body's own errors come first, as they would if the body were read whole before the sink saw it.
// Not thread-safe.
class BoundedBody {
 public:
  // A body sent with `content_encoding` (the Content-Encoding header): "" or "identity" (plain)
  // or "gzip", passed to `sink`. InvalidArgument for any other encoding.
  [[nodiscard]] static StatusOr<BoundedBody> ForEncoding(std::string_view content_encoding,
                                                         BodySink sink);

  BoundedBody(BoundedBody&&) noexcept;
  BoundedBody& operator=(BoundedBody&&) noexcept;
  ~BoundedBody();

  // Takes the next `size` bytes as received. ResourceExhausted, naming the cap, once the body is
  // over kMaxBodyBytes or decompresses to over kMaxDecompressedBodyBytes; InvalidArgument for
  // corrupt gzip data. REQUIRES: no earlier call failed.
  [[nodiscard]] Status Append(const char* data, size_t size);

  // Ends the body: InvalidArgument when a gzip body ended part-way through a member, or else the
  // sink's first error.
  [[nodiscard]] Status Finish() &&;

 private:
  class Inflater;
  BoundedBody(std::unique_ptr<Inflater> inflater, BodySink sink);

  // Counts `piece` of the decompressed body and hands it to the sink unless the sink failed.
  Status Deliver(std::string_view piece);

  std::unique_ptr<Inflater> inflater_;  // null for a plain body
  BodySink sink_;
  Status sink_status_;
  size_t received_bytes_ = 0;
  size_t decompressed_bytes_ = 0;
};

}  // namespace bsw::prom

#endif  // BSW_ADAPTERS_PROMETHEUS_BOUNDED_BODY_H_
