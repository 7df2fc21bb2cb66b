#ifndef BSW_ADAPTERS_PROMETHEUS_BOUNDED_BODY_H_
#define BSW_ADAPTERS_PROMETHEUS_BOUNDED_BODY_H_

#include <cstddef>
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

// A response body taken in as it arrives, decompressed as it goes, and never held beyond its caps:
// a body that passes one fails at that point, having kept at most the cap plus one chunk.
// Not thread-safe.
class BoundedBody {
 public:
  // A body sent with `content_encoding` (the Content-Encoding header): "" or "identity" (plain)
  // or "gzip". InvalidArgument for any other.
  [[nodiscard]] static StatusOr<BoundedBody> ForEncoding(std::string_view content_encoding);

  BoundedBody(BoundedBody&&) noexcept;
  BoundedBody& operator=(BoundedBody&&) noexcept;
  ~BoundedBody();

  // Takes the next `size` bytes as received. ResourceExhausted, naming the cap, once the body is
  // over kMaxBodyBytes or decompresses to over kMaxDecompressedBodyBytes; InvalidArgument for
  // corrupt gzip data. REQUIRES: no earlier call failed.
  [[nodiscard]] Status Append(const char* data, size_t size);

  // The decompressed body. InvalidArgument when a gzip body ended part-way through a member.
  [[nodiscard]] StatusOr<std::string> Finish() &&;

 private:
  class Inflater;
  explicit BoundedBody(std::unique_ptr<Inflater> inflater);

  std::unique_ptr<Inflater> inflater_;  // null for a plain body
  size_t received_bytes_ = 0;
  std::string decompressed_;
};

}  // namespace bsw::prom

#endif  // BSW_ADAPTERS_PROMETHEUS_BOUNDED_BODY_H_
