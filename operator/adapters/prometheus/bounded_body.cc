#include "operator/adapters/prometheus/bounded_body.h"

#include <zlib.h>

#include <algorithm>
#include <utility>

#include "operator/adapters/prometheus/text_format.h"

namespace bsw::prom {
namespace {

std::string MiB(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

Status OverCap(const std::string& what) {
  return Status(StatusCode::kResourceExhausted, "the metrics body " + what);
}

// Appends `size` bytes to `out` unless that makes it longer than `cap`; its capacity never grows
// past `cap` either.
bool AppendCapped(std::string& out, const char* data, size_t size, size_t cap) {
  if (size > cap - out.size()) return false;
  if (out.size() + size > out.capacity()) {
    out.reserve(std::min(cap, std::max(out.size() + size, 2 * out.capacity())));
  }
  out.append(data, size);
  return true;
}

}  // namespace

// A gzip stream of one or more members (as Go's gzip.Reader reads them), inflated a piece at a
// time.
class BoundedBody::Inflater {
 public:
  Inflater() : initialized_(inflateInit2(&stream_, 16 + MAX_WBITS) == Z_OK) {}
  ~Inflater() {
    if (initialized_) inflateEnd(&stream_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  bool initialized() const { return initialized_; }
  // True when the data so far ends at the end of a member.
  bool at_member_end() const { return at_member_end_; }

  // Inflates `size` bytes onto `out`, failing once `out` would pass kMaxDecompressedBodyBytes.
  Status Inflate(const char* data, size_t size, std::string& out) {
    stream_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    stream_.avail_in = static_cast<uInt>(size);
    do {
      if (at_member_end_) {
        inflateReset(&stream_);
        at_member_end_ = false;
      }
      stream_.next_out = reinterpret_cast<Bytef*>(buffer_);
      stream_.avail_out = sizeof(buffer_);
      int rc = inflate(&stream_, Z_NO_FLUSH);
      size_t produced = sizeof(buffer_) - stream_.avail_out;
      if (!AppendCapped(out, buffer_, produced, kMaxDecompressedBodyBytes)) {
        return OverCap("decompresses to over the cap of " + MiB(kMaxDecompressedBodyBytes));
      }
      if (rc == Z_STREAM_END) {
        at_member_end_ = true;
      } else if (rc == Z_BUF_ERROR) {
        break;  // needs more input
      } else if (rc != Z_OK) {
        return InvalidArgumentError(std::string("the metrics body is corrupt gzip data (") +
                                    (stream_.msg != nullptr ? stream_.msg : "zlib error") + ")");
      }
    } while (stream_.avail_in > 0 || (stream_.avail_out == 0 && !at_member_end_));
    return OkStatus();
  }

 private:
  z_stream stream_{};
  bool initialized_;
  bool at_member_end_ = false;
  char buffer_[16 << 10];
};

BoundedBody::BoundedBody(std::unique_ptr<Inflater> inflater) : inflater_(std::move(inflater)) {}
BoundedBody::BoundedBody(BoundedBody&&) noexcept = default;
BoundedBody& BoundedBody::operator=(BoundedBody&&) noexcept = default;
BoundedBody::~BoundedBody() = default;

StatusOr<BoundedBody> BoundedBody::ForEncoding(std::string_view content_encoding) {
  if (content_encoding.empty() || content_encoding == "identity") return BoundedBody(nullptr);
  if (content_encoding != "gzip") {
    return InvalidArgumentError("the metrics body has Content-Encoding '" +
                                Excerpt(content_encoding) + "'; only gzip is accepted");
  }
  auto inflater = std::make_unique<Inflater>();
  if (!inflater->initialized()) return InternalError("zlib could not start inflating");
  return BoundedBody(std::move(inflater));
}

Status BoundedBody::Append(const char* data, size_t size) {
  if (size > kMaxBodyBytes - received_bytes_) {
    return OverCap("is over the cap of " + MiB(kMaxBodyBytes) + " before decompression");
  }
  received_bytes_ += size;
  if (inflater_ != nullptr) return inflater_->Inflate(data, size, decompressed_);
  AppendCapped(decompressed_, data, size, kMaxBodyBytes);  // within the cap, as checked above
  return OkStatus();
}

StatusOr<std::string> BoundedBody::Finish() && {
  if (inflater_ != nullptr && !inflater_->at_member_end()) {
    return InvalidArgumentError("the metrics body ends part-way through its gzip data");
  }
  return std::move(decompressed_);
}

}  // namespace bsw::prom
