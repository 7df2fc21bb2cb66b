#include "operator/adapters/local/pool_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "nlohmann/json.hpp"
#include "operator/adapters/local/atomic_file.h"
#include "operator/adapters/local/state_dir.h"
#include "operator/adapters/yaml/sweep_file.h"
#include "operator/core/api.h"

namespace bsw::local {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ErrnoText(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// A damaged ledger cannot heal by waiting: FailedPrecondition, which ends the run.
StatusOr<PoolState> ParseLedger(const std::string& text, const std::string& path) {
  json doc = json::parse(text, nullptr, false);
  StatusOr<PoolState> state = doc.is_discarded()
                                  ? StatusOr<PoolState>(InvalidArgumentError(path + ": not JSON"))
                                  : ParsePoolState(doc, path);
  if (state.ok()) return state;
  return FailedPreconditionError("the pool's ledger is damaged: " + state.status().message() +
                                 "\n(restore " + path +
                                 " from a backup; or stop every sweep of the pool and remove it, "
                                 "which forgets what they used)");
}

// fsyncs directory `dir`, so that a rename into it survives a power loss.
Status SyncDirectory(const fs::path& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return InternalError(ErrnoText("cannot open", dir.string()));
  int rc = fsync(fd);
  close(fd);
  return rc == 0 ? OkStatus() : InternalError(ErrnoText("cannot sync", dir.string()));
}

}  // namespace

StatusOr<PoolSpec> ReadPoolFile(const std::string& path, json* object) {
  StatusOr<json> doc = ReadSweepFile(path);
  if (!doc.ok()) return doc.status();
  if (object != nullptr) *object = *doc;
  StatusOr<PoolSpec> spec = ParsePool(*doc);
  if (!spec.ok()) {
    return InvalidArgumentError(path + " is not a valid BudgetPool:\n" + spec.status().message());
  }
  return spec;
}

StatusOr<std::unique_ptr<PoolFile>> PoolFile::Open(const std::string& path,
                                                   const std::string& sweep_name,
                                                   const std::string& pool_ref,
                                                   const std::string& state_dir,
                                                   const Clock& clock) {
  json object;
  StatusOr<PoolSpec> spec = ReadPoolFile(path, &object);
  if (!spec.ok()) return spec.status();
  if (!pool_ref.empty() && pool_ref != spec->name) {
    return InvalidArgumentError("--pool " + path + ": the pool is \"" + spec->name +
                                "\", but spec.budget.poolRef.name of sweep \"" + sweep_name +
                                "\" is \"" + pool_ref + "\"");
  }
  std::string lock_path = path + ".lock";
  int lock_fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd < 0) return InvalidArgumentError(ErrnoText("--pool: cannot open", lock_path));
  std::error_code ec;
  fs::path dir = fs::canonical(state_dir, ec);
  if (ec) {
    close(lock_fd);
    return InvalidArgumentError("--state-dir " + state_dir + ": " + ec.message());
  }
  std::unique_ptr<PoolFile> pool(new PoolFile(path, dir.string(), lock_fd, clock));
  pool->object_ = std::move(object);
  pool->spec_ = *spec;
  return pool;
}

PoolFile::PoolFile(std::string path, std::string key, int lock_fd, const Clock& clock)
    : path_(std::move(path)), key_(std::move(key)), lock_fd_(lock_fd), clock_(clock) {}

PoolFile::~PoolFile() { close(lock_fd_); }

void PoolFile::Unlock() { flock(lock_fd_, LOCK_UN); }

StatusOr<PoolCap> PoolFile::Acquire(double held) {
  while (flock(lock_fd_, LOCK_EX) != 0) {
    if (errno != EINTR) return InternalError(ErrnoText("cannot lock", path_ + ".lock"));
  }
  StatusOr<PoolSpec> spec = ReadPoolFile(path_);
  std::string ledger_path = path_ + ".ledger.json";
  StatusOr<std::string> text = ReadFile(ledger_path);
  StatusOr<PoolState> state = text.status().code() == StatusCode::kNotFound ? PoolState{}
                              : text.ok() ? ParseLedger(*text, ledger_path)
                                          : StatusOr<PoolState>(text.status());
  if (!spec.ok() || !state.ok()) {
    Unlock();
    return spec.ok() ? state.status() : spec.status();
  }
  spec_ = *spec;
  state_ = std::move(*state);
  RollPeriod(spec_, clock_.NowUnixSeconds(), &state_);
  for (auto& [key, account] : state_.accounts) {
    if (key != key_ && account.active && !RunnerHoldsStateDir(key)) account.active = false;
  }
  return CapOf(spec_, state_.accounts, key_, held);
}

Status PoolFile::Commit(const PoolAccount& account) {
  StoreAccount(key_, account, &state_);
  json doc = PoolStateJson(spec_, state_);
  doc["pool"] = spec_.name;
  fs::path ledger_path = path_ + ".ledger.json";
  Status written = WriteFileAtomically(ledger_path, doc.dump(2) + "\n");
  if (written.ok()) written = SyncDirectory(fs::absolute(ledger_path).parent_path());
  Unlock();
  return written;
}

}  // namespace bsw::local
