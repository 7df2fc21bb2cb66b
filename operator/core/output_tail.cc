#include "operator/core/output_tail.h"

#include <algorithm>
#include <vector>

namespace bsw {
namespace {

// The length of the UTF-8 sequence that lead byte `lead` starts; 0 for none.
size_t SequenceLength(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  return (lead >> 3) == 0x1E ? 4 : 0;
}

// Whether a sequence of `length` bytes led by `lead`, then `second`, is an overlong form, a
// surrogate or a code point past U+10FFFF: none of them is valid UTF-8.
bool Forbidden(size_t length, unsigned char lead, unsigned char second) {
  switch (length) {
    case 2:
      return lead < 0xC2;
    case 3:
      return (lead == 0xE0 && second < 0xA0) || (lead == 0xED && second >= 0xA0);
    case 4:
      return (lead == 0xF0 && second < 0x90) || lead > 0xF4 || (lead == 0xF4 && second >= 0x90);
    default:
      return false;
  }
}

// The length of the valid UTF-8 sequence at the start of `text`, or 0 when it is not one.
size_t Utf8Length(std::string_view text) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  size_t length = SequenceLength(byte(0));
  if (length == 0 || length > text.size()) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  return length > 1 && Forbidden(length, byte(0), byte(1)) ? 0 : length;
}

// `line` with invalid bytes as '?' and control characters other than tab dropped.
std::string Printable(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  while (!line.empty()) {
    size_t length = Utf8Length(line);
    if (length == 0) {
      out += '?';
      length = 1;
    } else if (length > 1 || line[0] == '\t' ||
               (static_cast<unsigned char>(line[0]) >= 0x20 && line[0] != 0x7F)) {
      out.append(line.substr(0, length));
    }
    line.remove_prefix(length);
  }
  return out;
}

bool Blank(const std::string& line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; });
}

}  // namespace

std::string OutputTail(std::string_view output) {
  std::vector<std::string> lines;  // newest first
  size_t bytes = 0;
  size_t end = output.size();
  while (end > 0 && lines.size() < kOutputTailMaxLines && bytes < kOutputTailMaxBytes) {
    size_t newline = output.rfind('\n', end - 1);
    size_t start = newline == std::string_view::npos ? 0 : newline + 1;
    std::string line = Printable(output.substr(start, end - start));
    end = newline == std::string_view::npos ? 0 : newline;
    if (Blank(line)) continue;
    size_t room = kOutputTailMaxBytes - bytes - (lines.empty() ? 0 : 1);
    if (line.size() > room) {
      // Keep the line's end, starting on a character boundary.
      size_t cut = line.size() - room;
      while (cut < line.size() && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) ++cut;
      line.erase(0, cut);
      if (line.empty()) break;
    }
    bytes += line.size() + (lines.empty() ? 0 : 1);
    lines.push_back(std::move(line));
  }
  std::string tail;
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    tail += (tail.empty() ? "" : "\n") + *it;
  }
  return tail;
}

}  // namespace bsw
