#include "operator/collect/line_splitter.h"

namespace bsw::collect {

LineSplitter::LineSplitter(size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

void LineSplitter::Feed(std::string_view bytes, const OnLine& on_line) {
  while (!bytes.empty()) {
    size_t newline = bytes.find('\n');
    std::string_view piece = bytes.substr(0, newline);
    if (!skipping_ && partial_.size() + piece.size() > max_line_bytes_) {
      skipping_ = true;
      ++lines_too_long_;
      partial_.clear();
    }
    if (!skipping_) partial_.append(piece);
    if (newline == std::string_view::npos) return;
    if (!skipping_) on_line(partial_);
    partial_.clear();
    skipping_ = false;
    bytes.remove_prefix(newline + 1);
  }
}

void LineSplitter::Finish(const OnLine& on_line) {
  if (!skipping_ && !partial_.empty()) on_line(partial_);
  Reset();
}

void LineSplitter::Reset() {
  partial_.clear();
  skipping_ = false;
}

}  // namespace bsw::collect
