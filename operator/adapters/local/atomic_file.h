#ifndef BSW_ADAPTERS_LOCAL_ATOMIC_FILE_H_
#define BSW_ADAPTERS_LOCAL_ATOMIC_FILE_H_

#include <filesystem>
#include <string>
#include <string_view>

#include "base/status.h"

namespace bsw::local {

// Replaces `path` with `content` atomically: readers see the old or the new file, never a part.
// The data is fsynced before the rename, so a crash leaves one of the two versions.
[[nodiscard]] Status WriteFileAtomically(const std::filesystem::path& path,
                                         std::string_view content);

// Creates `path` with `content` atomically, only if it does not exist yet. Of several processes
// racing to create the same path, exactly one succeeds; the others get AlreadyExists.
[[nodiscard]] Status CreateFileExclusively(const std::filesystem::path& path,
                                           std::string_view content);

// Whether `status` failed because the disk is full (ENOSPC): it heals once space is freed.
bool IsDiskFull(const Status& status);

// The whole content of `path`; NotFound when it does not exist.
[[nodiscard]] StatusOr<std::string> ReadFile(const std::filesystem::path& path);

}  // namespace bsw::local

#endif  // BSW_ADAPTERS_LOCAL_ATOMIC_FILE_H_
