#include "operator/core/placeholders.h"

namespace bsw {
namespace {

// One placeholder found in a text: where it starts, its length and the name it places (empty
// when it is malformed).
struct Placeholder {
  size_t at = std::string_view::npos;
  size_t length = 0;
  std::string name;
  bool closed = false;
};

Placeholder FindPlaceholder(std::string_view text, size_t from) {
  Placeholder p;
  p.at = text.find(kPlaceholderOpen, from);
  if (p.at == std::string_view::npos) return p;
  const size_t name_at = p.at + kPlaceholderOpen.size();
  const size_t close = text.find('}', name_at);
  if (close == std::string_view::npos) {
    p.length = text.size() - p.at;
    return p;
  }
  p.length = close + 1 - p.at;
  p.name = std::string(text.substr(name_at, close - name_at));
  p.closed = true;
  return p;
}

}  // namespace

std::vector<std::string> PlaceholderNames(std::string_view text, bool* malformed) {
  std::vector<std::string> names;
  for (Placeholder p = FindPlaceholder(text, 0); p.at != std::string_view::npos;
       p = FindPlaceholder(text, p.at + p.length)) {
    if (p.name.empty()) {
      *malformed = true;
    } else {
      names.push_back(p.name);
    }
  }
  return names;
}

std::string RewritePlaceholders(std::string_view text,
                                const std::function<std::string(const std::string&)>& replace) {
  std::string out;
  size_t copied = 0;
  for (Placeholder p = FindPlaceholder(text, 0); p.at != std::string_view::npos;
       p = FindPlaceholder(text, p.at + p.length)) {
    if (!p.closed) continue;
    out.append(text.substr(copied, p.at - copied));
    out += replace(p.name);
    copied = p.at + p.length;
  }
  out.append(text.substr(copied));
  return out;
}

std::string PlaceParams(std::string_view text,
                        const std::vector<std::pair<std::string, std::string>>& params) {
  return RewritePlaceholders(text, [&](const std::string& placed) {
    for (const auto& [name, value] : params) {
      if (name == placed) return value;
    }
    return std::string(kPlaceholderOpen) + placed + "}";
  });
}

std::set<std::string> PlacedNames(const std::vector<std::string>& texts) {
  std::set<std::string> placed;
  bool malformed = false;
  for (const std::string& text : texts) {
    for (std::string& name : PlaceholderNames(text, &malformed)) placed.insert(std::move(name));
  }
  return placed;
}

}  // namespace bsw
