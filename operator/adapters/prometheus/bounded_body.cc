#include "operator/adapters/prometheus/bounded_body.h"

#include <zlib.h>

#include <utility>

#include "operator/adapters/prometheus/text_format.h"

namespace bsw::prom {
namespace {

std::string MiB(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

Status OverCap(const std::string& what) {
  return Status(StatusCode::kResourceExhausted, "the metrics body " + what);
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

  // Inflates `size` bytes, each piece delivered to `body`.
  Status Inflate(const char* data, size_t size, BoundedBody& body) {
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
      if (Status delivered = body.Deliver(std::string_view(buffer_, produced)); !delivered.ok()) {
        return delivered;
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

BoundedBody::BoundedBody(std::unique_ptr<Inflater> inflater, BodySink sink)
    : inflater_(std::move(inflater)), sink_(std::move(sink)) {}
BoundedBody::BoundedBody(BoundedBody&&) noexcept = default;
BoundedBody& BoundedBody::operator=(BoundedBody&&) noexcept = default;
BoundedBody::~BoundedBody() = default;

StatusOr<BoundedBody> BoundedBody::ForEncoding(std::string_view content_encoding, BodySink sink) {
  if (content_encoding.empty() || content_encoding == "identity") {
    return BoundedBody(nullptr, std::move(sink));
  }
  if (content_encoding != "gzip") {
    return InvalidArgumentError("the metrics body has Content-Encoding '" +
                                Excerpt(content_encoding) + "'; only gzip is accepted");
  }
  auto inflater = std::make_unique<Inflater>();
  if (!inflater->initialized()) return InternalError("zlib could not start inflating");
  return BoundedBody(std::move(inflater), std::move(sink));
}

Status BoundedBody::Append(const char* data, size_t size) {
  if (size > kMaxBodyBytes - received_bytes_) {
    return OverCap("is over the cap of " + MiB(kMaxBodyBytes) + " before decompression");
  }
  received_bytes_ += size;
  if (inflater_ != nullptr) return inflater_->Inflate(data, size, *this);
  return Deliver(std::string_view(data, size));
}

Status BoundedBody::Deliver(std::string_view piece) {
  if (piece.size() > kMaxDecompressedBodyBytes - decompressed_bytes_) {
    return OverCap("decompresses to over the cap of " + MiB(kMaxDecompressedBodyBytes));
  }
  decompressed_bytes_ += piece.size();
  if (sink_status_.ok()) sink_status_ = sink_(piece);
  return OkStatus();
}

Status BoundedBody::Finish() && {
  if (inflater_ != nullptr && !inflater_->at_member_end()) {
    return InvalidArgumentError("the metrics body ends part-way through its gzip data");
  }
  return sink_status_;
}

}  // namespace bsw::prom
