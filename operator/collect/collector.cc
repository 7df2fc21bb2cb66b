#include "operator/collect/collector.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <span>
#include <tuple>
#include <utility>

#include "contract/trainer_exit_codes.h"
#include "operator/collect/exposition.h"

namespace bsw::collect {
namespace {

// The poll loop wakes at least this often, to tail the file and to keep the deadlines.
constexpr int kPollMilliseconds = 50;
constexpr auto kTailInterval = std::chrono::milliseconds(100);
// The time a scrape's answer is given to go out before the collector exits.
constexpr auto kAnswerTime = std::chrono::milliseconds(200);
// The least time the last values are served after the command exits, scraped or not: a reader
// may act on an answer a while after it got it (the operator's takes it on its next pass), and it
// must not find the trial ended before then.
constexpr auto kMinLinger = std::chrono::seconds(1);
constexpr size_t kReadChunkBytes = 64 * 1024;
constexpr size_t kTailChunkBytes = 1024 * 1024;
// Bound the last reads of the pipes and the file after the command ended (a process it left behind
// may still write).
constexpr int kFinalReadChunks = 64;
constexpr int kFinalTailChunks = 64;

// The self-pipe the signal handler writes signal numbers to; the loop polls the read end.
int signal_write_fd = -1;
int signal_read_fd = -1;

void OnSignal(int signal_number) {
  int saved_errno = errno;
  char number = static_cast<char>(signal_number);
  (void)!write(signal_write_fd, &number, 1);
  errno = saved_errno;
}

// Returns the read end of a self-pipe that receives SIGTERM, SIGINT and SIGCHLD.
int InstallSignalPipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
  signal_write_fd = fds[1];
  struct sigaction action {};
  action.sa_handler = OnSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int signal_number : {SIGTERM, SIGINT, SIGCHLD}) sigaction(signal_number, &action, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  return fds[0];
}

void Note(const std::string& message) {
  std::string line = "budgetsweep-collect: " + message + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

// Writes all of `bytes` to `fd`, waiting while it is full; drops the rest when it is gone, so that
// a closed stdout never stalls the command.
void WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written > 0) {
      bytes.remove_prefix(static_cast<size_t>(written));
    } else if (written < 0 && errno == EAGAIN) {
      pollfd entry{fd, POLLOUT, 0};
      poll(&entry, 1, kPollMilliseconds);
    } else if (!(written < 0 && errno == EINTR)) {
      return;
    }
  }
}

}  // namespace

Collector::Collector(CollectOptions options, CollectEnvironment env, LineParser parser,
                     std::unique_ptr<MetricsServer> server, std::unique_ptr<FileTail> tail)
    : options_(std::move(options)),
      env_(std::move(env)),
      parser_(std::move(parser)),
      server_(std::move(server)),
      tail_(std::move(tail)),
      stdout_lines_(parser_.max_line_bytes()),
      stderr_lines_(parser_.max_line_bytes()),
      file_lines_(parser_.max_line_bytes()) {}

int Collector::Run() {
  signal_read_fd = InstallSignalPipe();
  std::string error;
  std::optional<Child> child = SpawnInOwnGroup(options_.command, !tail_, &error);
  if (signal_read_fd < 0 || !child) {
    Note(error.empty() ? "cannot make the signal pipe" : error);
    return kExitInternal;
  }
  child_ = *child;
  running_ = true;
  PublishIfChanged();
  while (!Done(Clock::now())) Step();
  NoteWhatWasNotRead();
  return reached_until_ ? kExitOk : ExitCodeOf(wait_status_);
}

void Collector::Step() {
  std::vector<pollfd> fds = {{signal_read_fd, POLLIN, 0}};
  for (int fd : {child_.stdout_fd, child_.stderr_fd}) fds.push_back({fd, POLLIN, 0});
  size_t server_at = fds.size();
  if (server_) server_->AppendPollFds(&fds);
  poll(fds.data(), fds.size(), kPollMilliseconds);
  Clock::time_point now = Clock::now();
  if (fds[0].revents) HandleSignals();
  if (fds[1].revents) ReadStream(&child_.stdout_fd, STDOUT_FILENO, stdout_lines_);
  if (fds[2].revents) ReadStream(&child_.stderr_fd, STDERR_FILENO, stderr_lines_);
  if (tail_ && running_ && now >= next_tail_at_) TailFile(now, /*to_end=*/false);
  PublishIfChanged();
  Reap(now);
  StopAtUntil(now);
  if (server_) server_->Handle(std::span(fds).subspan(server_at), now);
}

void Collector::ReadStream(int* fd, int to_fd, LineSplitter& splitter) {
  char buffer[kReadChunkBytes];
  ssize_t got = read(*fd, buffer, sizeof(buffer));
  if (got < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (got <= 0) {
    splitter.Finish([this](std::string_view line) { Parse(line); });
    close(*fd);
    *fd = -1;
    return;
  }
  std::string_view bytes(buffer, static_cast<size_t>(got));
  WriteAll(to_fd, bytes);
  splitter.Feed(bytes, [this](std::string_view line) { Parse(line); });
}

// Reads what the command left in its pipes. Processes it left behind may hold them open and keep
// writing, so a pipe is closed once it is empty or after kFinalReadChunks reads, not at its end.
void Collector::DrainStreams() {
  for (auto [fd, to_fd, splitter] :
       {std::tuple{&child_.stdout_fd, STDOUT_FILENO, &stdout_lines_},
        std::tuple{&child_.stderr_fd, STDERR_FILENO, &stderr_lines_}}) {
    pollfd entry{*fd, POLLIN, 0};
    for (int chunk = 0; *fd >= 0 && chunk < kFinalReadChunks && poll(&entry, 1, 0) > 0; ++chunk) {
      ReadStream(fd, to_fd, *splitter);
    }
    if (*fd >= 0) {
      splitter->Finish([this](std::string_view line) { Parse(line); });
      close(*fd);
      *fd = -1;
    }
  }
}

void Collector::TailFile(Clock::time_point now, bool to_end) {
  next_tail_at_ = now + kTailInterval;
  for (int chunk = 0; chunk < (to_end ? kFinalTailChunks : 1); ++chunk) {
    FileTail::Read read = tail_->ReadAppended(kTailChunkBytes);
    if (!read.error.empty()) Note(read.error);
    if (read.started_over) file_lines_.Reset();
    file_lines_.Feed(read.bytes, [this](std::string_view line) { Parse(line); });
    if (read.bytes.size() == kTailChunkBytes) next_tail_at_ = now;
    if (read.bytes.size() < kTailChunkBytes) break;
  }
  if (to_end) file_lines_.Finish([this](std::string_view line) { Parse(line); });
}

void Collector::HandleSignals() {
  char numbers[64];
  ssize_t got = read(signal_read_fd, numbers, sizeof(numbers));
  for (ssize_t i = 0; i < got; ++i) {
    int signal_number = numbers[i];
    if (signal_number == SIGCHLD) continue;
    if (running_) {
      kill(-child_.pid, signal_number);
    } else {
      signaled_after_exit_ = true;
    }
  }
}

void Collector::Reap(Clock::time_point now) {
  if (!running_ || waitpid(child_.pid, &wait_status_, WNOHANG) != child_.pid) return;
  running_ = false;
  exited_at_ = now;
  DrainStreams();
  if (tail_) TailFile(now, /*to_end=*/true);
  PublishIfChanged();
}

void Collector::StopAtUntil(Clock::time_point now) {
  if (!reached_until_ && env_.until && parser_.resource_completed() >= *env_.until) {
    reached_until_ = true;
    if (!running_) return;
    kill(-child_.pid, SIGTERM);
    kill_at_ = now + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(options_.stop_grace_seconds));
  }
  if (running_ && kill_at_ && now >= *kill_at_) {
    kill(-child_.pid, SIGKILL);
    kill_at_.reset();
  }
}

void Collector::Parse(std::string_view line) {
  LineOutcome outcome = parser_.Feed(line);
  if (outcome.dropped > 0 && !noted_dropped_) {
    Note(std::to_string(kMaxValues) + " values kept; further values are dropped");
    noted_dropped_ = true;
  }
}

void Collector::PublishIfChanged() {
  if (parser_.values().size() == published_values_ &&
      parser_.resource_completed() == published_resource_) {
    return;
  }
  published_values_ = parser_.values().size();
  published_resource_ = parser_.resource_completed();
  if (server_) {
    server_->Publish(
        RenderExposition(env_.sweep, env_.trial, parser_.values(), parser_.resource_completed()));
  }
}

bool Collector::Done(Clock::time_point now) const {
  if (running_) return false;
  if (!server_ || signaled_after_exit_) return true;
  if (now - exited_at_ >= std::chrono::duration<double>(options_.grace_seconds)) return true;
  std::optional<Clock::time_point> scraped = server_->ScrapeOfLatest();
  return now - exited_at_ >= kMinLinger && scraped && now >= *scraped + kAnswerTime;
}

void Collector::NoteWhatWasNotRead() const {
  size_t too_long = stdout_lines_.lines_too_long() + stderr_lines_.lines_too_long() +
                    file_lines_.lines_too_long();
  if (too_long > 0) {
    Note(std::to_string(too_long) + " lines over " + std::to_string(parser_.max_line_bytes()) +
         " bytes were passed through but not parsed");
  }
  const ParserOptions& p = options_.parser;
  const bool objective_read =
      std::any_of(parser_.values().begin(), parser_.values().end(),
                  [&](const auto& value) { return value.first.metric == p.objective; });
  if (!objective_read) {
    Note("no value of " + p.objective + " was read: a line must hold " + p.objective + "=VALUE" +
         (p.resource_key.empty() ? "" : " and " + p.resource_key + "=N") +
         (p.filter.empty() ? "" : ", as --filter matches them") +
         (options_.source == Source::kFile ? ", in " + options_.path : ""));
  }
}

}  // namespace bsw::collect
