#ifndef BSW_CORE_OUTPUT_TAIL_H_
#define BSW_CORE_OUTPUT_TAIL_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace bsw {

// What a failed trial's record keeps of the trainer's output: its last lines, so that the reason
// of a failure (a missing dataset, a bad flag, a stack trace's last frame) is where users look,
// the console, `-o json`, the trial record, without growing a record or a status without bound.
inline constexpr size_t kOutputTailMaxLines = 5;
inline constexpr size_t kOutputTailMaxBytes = 1024;
// How much of a log a backend reads from its end to find those lines.
inline constexpr size_t kOutputTailReadBytes = 4 * kOutputTailMaxBytes;

// The last kOutputTailMaxLines non-blank lines of `output`, at most kOutputTailMaxBytes, joined
// by '\n' with no trailing newline. Safe to print and to put in JSON: a byte that is not part of
// valid UTF-8 becomes '?', control characters other than tab (terminal escapes, '\r') are dropped,
// and a line cut by the byte limit keeps its end. Empty when there is no printable output.
std::string OutputTail(std::string_view output);

}  // namespace bsw

#endif  // BSW_CORE_OUTPUT_TAIL_H_
