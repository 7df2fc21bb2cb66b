#ifndef BSW_OPERATOR_COLLECT_LINE_SPLITTER_H_
#define BSW_OPERATOR_COLLECT_LINE_SPLITTER_H_

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace bsw::collect {

// Cuts a byte stream into lines, holding at most `max_line_bytes` of an unfinished line: a longer
// line is skipped up to its newline and counted.
class LineSplitter {
 public:
  using OnLine = std::function<void(std::string_view line)>;

  explicit LineSplitter(size_t max_line_bytes);

  // Calls on_line with each line that `bytes` completes, without its newline.
  void Feed(std::string_view bytes, const OnLine& on_line);
  // Calls on_line with the unfinished last line, if any: the stream has ended.
  void Finish(const OnLine& on_line);
  // Forgets the unfinished line: the stream starts over.
  void Reset();

  [[nodiscard]] size_t lines_too_long() const { return lines_too_long_; }

 private:
  size_t max_line_bytes_;
  std::string partial_;
  bool skipping_ = false;
  size_t lines_too_long_ = 0;
};

}  // namespace bsw::collect

#endif  // BSW_OPERATOR_COLLECT_LINE_SPLITTER_H_
