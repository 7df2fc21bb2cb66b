#ifndef BSW_OPERATOR_COLLECT_FILE_TAIL_H_
#define BSW_OPERATOR_COLLECT_FILE_TAIL_H_

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace bsw::collect {

// Follows a file inside the trial directory that the training script appends to. The file may
// appear late; once it exists it must be a regular file whose real path is inside the directory,
// or it is refused for good.
class FileTail {
 public:
  // REQUIRES: trial_dir is a real path (no symbolic links); relative_path is relative, without
  // "..".
  FileTail(std::string trial_dir, std::string relative_path);
  ~FileTail();
  FileTail(const FileTail&) = delete;
  FileTail& operator=(const FileTail&) = delete;

  struct Read {
    std::string bytes;          // appended since the last read
    bool started_over = false;  // the file was truncated: `bytes` are from its start
    std::string error;          // set once, when the file is refused
  };
  // Reads at most `max_bytes` of what was appended; nothing before the file exists or after it
  // was refused.
  [[nodiscard]] Read ReadAppended(size_t max_bytes);

 private:
  [[nodiscard]] std::string Open();

  std::string trial_dir_;
  std::string relative_path_;
  int fd_ = -1;
  off_t offset_ = 0;
  bool refused_ = false;
};

}  // namespace bsw::collect

#endif  // BSW_OPERATOR_COLLECT_FILE_TAIL_H_
