#ifndef BSW_BASE_READ_FILE_H_
#define BSW_BASE_READ_FILE_H_

#include <fstream>
#include <sstream>
#include <string>

#include "base/status.h"

namespace bsw {

// The whole content of a small file (a certificate, a key, a token, a kubeconfig);
// InvalidArgument "cannot read PATH" when it cannot be opened.
inline StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgumentError("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace bsw

#endif  // BSW_BASE_READ_FILE_H_
