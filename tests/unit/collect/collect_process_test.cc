// Runs the built budgetsweep-collect over small shell scripts, as the operator runs it over a
// training script, and checks what a sweep relies on: the output passes through, the values are
// served at their resource, signals reach the script, and the exit code is the script's.

#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;
using Env = std::map<std::string, std::string>;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The answer to GET `path`, head and body, or "" when the connection failed.
std::string Get(int port, const std::string& path = "/metrics") {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval timeout{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0) {
    std::string request = "GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n";
    EXPECT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
    char buffer[65536];
    for (ssize_t got; (got = read(fd, buffer, sizeof(buffer))) > 0;) answer.append(buffer, got);
  }
  close(fd);
  return answer;
}

// One run of the wrapper, with its stdout and stderr read into strings.
class Wrapper {
 public:
  Wrapper(const std::vector<std::string>& args, const Env& env) : start_(Clock::now()) {
    int out_pipe[2], err_pipe[2];
    EXPECT_EQ(pipe(out_pipe), 0);
    EXPECT_EQ(pipe(err_pipe), 0);
    pid_ = fork();
    if (pid_ == 0) Exec(args, env, out_pipe[1], err_pipe[1]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    fds_[0] = out_pipe[0];
    fds_[1] = err_pipe[0];
  }

  ~Wrapper() {
    if (pid_ > 0 && status_ < 0) kill(pid_, SIGKILL), waitpid(pid_, nullptr, 0);
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }

  // Reads output until `done` holds or `seconds` pass; returns whether it held.
  bool ReadUntil(const std::function<bool()>& done, double seconds) {
    Clock::time_point start = Clock::now();
    while (!done()) {
      if (SecondsSince(start) > seconds) return false;
      ReadSome(20);
    }
    return true;
  }

  // The port from "serving metrics on HOST:PORT", or 0.
  int Port() {
    const std::string marker = "serving metrics on 127.0.0.1:";
    ReadUntil([&] { return err.find('\n', err.find(marker)) != std::string::npos; }, 3);
    size_t at = err.find(marker);
    return at == std::string::npos ? 0 : std::atoi(err.c_str() + at + marker.size());
  }

  // Waits for the wrapper to exit (killing it after `seconds`) and reads the rest of its output;
  // returns its exit code, or -1 when it had to be killed.
  int Wait(double seconds) {
    int status = 0;
    Clock::time_point start = Clock::now();
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (SecondsSince(start) > seconds) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        status_ = 0;
        return -1;
      }
      ReadSome(20);
    }
    elapsed_seconds = SecondsSince(start_);
    status_ = status;
    ReadUntil([this] { return fds_[0] < 0 && fds_[1] < 0; }, 1);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // Scrapes until the answer holds `expected`, for at most 3 s, reading the wrapper's output in
  // between (a full pipe would stall it); returns the last answer.
  std::string ScrapeUntil(int port, const std::string& expected) {
    std::string answer;
    ReadUntil(
        [&] {
          answer = Get(port);
          return answer.find(expected) != std::string::npos;
        },
        3);
    return answer;
  }

  pid_t pid() const { return pid_; }

  std::string out;
  std::string err;
  double elapsed_seconds = 0;

 private:
  [[noreturn]] static void Exec(const std::vector<std::string>& args, const Env& env, int out_fd,
                                int err_fd) {
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    for (const char* name : {"BUDGETSWEEP_METRICS_PORT", "BUDGETSWEEP_METRICS_HOST",
                             "BUDGETSWEEP_UNTIL", "BUDGETSWEEP_TRIAL_DIR"}) {
      unsetenv(name);
    }
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv = {const_cast<char*>(BSW_COLLECT_PATH)};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(126);
  }

  void ReadSome(int milliseconds) {
    pollfd entries[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};
    poll(entries, 2, milliseconds);
    std::string* sinks[2] = {&out, &err};
    for (int i = 0; i < 2; ++i) {
      if (!entries[i].revents) continue;
      char buffer[65536];
      ssize_t got = read(fds_[i], buffer, sizeof(buffer));
      if (got > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(got));
      } else {
        close(fds_[i]);
        fds_[i] = -1;
      }
    }
  }

  Clock::time_point start_;
  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
  int status_ = -1;
};

std::string Series(const std::string& metric, const std::string& resource) {
  return "budgetsweep_trainer_objective{sweep=\"s\",trial=\"t\",metric=\"" + metric +
         "\",resource=\"" + resource + "\"}";
}

const Env kServing = {
    {"BUDGETSWEEP_METRICS_PORT", "0"}, {"BUDGETSWEEP_SWEEP", "s"}, {"BUDGETSWEEP_TRIAL", "t"}};

TEST(CollectProcess, PassesOutputThroughUnchangedAndExitsWithTheCommandsCode) {
  Wrapper wrapper({"--objective=accuracy", "--", "sh", "-c",
                   "printf 'accuracy=1\\npartial'; printf 'e=2\\n\\001' >&2; exit 7"},
                  {});
  EXPECT_EQ(wrapper.Wait(5), 7);
  EXPECT_EQ(wrapper.out, "accuracy=1\npartial");
  EXPECT_EQ(wrapper.err, "e=2\n\001");
}

TEST(CollectProcess, InstallCopiesItselfIntoADirectoryAsAProgramAllMayRun) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("install." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  Wrapper wrapper({"--install=" + dir.string()}, {});
  EXPECT_EQ(wrapper.Wait(5), 0) << wrapper.err;
  const std::filesystem::path copy = dir / "budgetsweep-collect";
  EXPECT_EQ(std::filesystem::file_size(copy), std::filesystem::file_size(BSW_COLLECT_PATH));
  EXPECT_EQ(std::filesystem::status(copy).permissions() & std::filesystem::perms::all,
            std::filesystem::perms(0755));
  std::filesystem::remove_all(dir);
  Wrapper nowhere({"--install=/nonexistent/dir"}, {});
  EXPECT_EQ(nowhere.Wait(5), 1);
  EXPECT_THAT(nowhere.err, ::testing::HasSubstr("--install=/nonexistent/dir: "));
}

TEST(CollectProcess, TheCommandIsNotGivenTheMetricsPortItServes) {
  Wrapper wrapper({"--objective=accuracy", "--grace-seconds=0", "--", "sh", "-c",
                   "echo accuracy=1 port=${BUDGETSWEEP_METRICS_PORT:-none}"},
                  kServing);
  EXPECT_EQ(wrapper.Wait(5), 0) << wrapper.err;
  EXPECT_EQ(wrapper.out, "accuracy=1 port=none\n");
}

TEST(CollectProcess, ExitsWith128PlusTheSignalThatKilledTheCommand) {
  Wrapper wrapper({"--objective=accuracy", "--", "sh", "-c", "kill -9 $$"}, {});
  EXPECT_EQ(wrapper.Wait(5), 128 + SIGKILL);
}

TEST(CollectProcess, ServesValuesCountedByObjectiveLinesThenExitsSoonAfterTheScrape) {
  Wrapper wrapper({"--objective=accuracy", "--grace-seconds=10", "--", "sh", "-c",
                   "echo 'accuracy=0.5 loss=2'; echo 'accuracy=0.75' >&2"},
                  kServing);
  int port = wrapper.Port();
  ASSERT_GT(port, 0) << wrapper.err;
  std::string answer = wrapper.ScrapeUntil(port, Series("accuracy", "2"));
  EXPECT_THAT(answer, HasSubstr("HTTP/1.1 200 OK"));
  EXPECT_THAT(answer, HasSubstr(Series("accuracy", "1") + " 0.5\n"));
  EXPECT_THAT(answer, HasSubstr(Series("loss", "1") + " 2\n"));
  EXPECT_THAT(answer, HasSubstr(Series("accuracy", "2") + " 0.75\n"));
  EXPECT_THAT(answer,
              HasSubstr("budgetsweep_trainer_resource_completed{sweep=\"s\",trial=\"t\"} 2"));
  EXPECT_THAT(Get(port, "/other"), HasSubstr("404"));
  EXPECT_EQ(wrapper.Wait(5), 0);
  EXPECT_LT(wrapper.elapsed_seconds, 3);
}

TEST(CollectProcess, LingersForTheWholeGraceWhenNeverScraped) {
  Wrapper wrapper(
      {"--objective=accuracy", "--grace-seconds=0.6", "--", "sh", "-c", "echo accuracy=1"},
      kServing);
  EXPECT_EQ(wrapper.Wait(5), 0);
  EXPECT_GE(wrapper.elapsed_seconds, 0.6);
  EXPECT_LT(wrapper.elapsed_seconds, 2);
}

TEST(CollectProcess, KeepsTheFirstValueAtAResourceKeysResource) {
  Wrapper wrapper({"--objective=accuracy", "--resource-key=epoch", "--grace-seconds=5", "--", "sh",
                   "-c", "echo 'epoch=3 accuracy=0.5'; echo 'epoch=3 accuracy=0.9'"},
                  kServing);
  int port = wrapper.Port();
  ASSERT_GT(port, 0) << wrapper.err;
  // Both lines passed through, so both were parsed before the next scrape is answered.
  ASSERT_TRUE(wrapper.ReadUntil([&] { return wrapper.out.size() == 42; }, 3)) << wrapper.out;
  std::string answer = wrapper.ScrapeUntil(port, Series("accuracy", "3"));
  EXPECT_THAT(answer, HasSubstr(Series("accuracy", "3") + " 0.5\n"));
  EXPECT_THAT(answer, Not(HasSubstr("0.9")));
  EXPECT_THAT(answer, Not(HasSubstr("metric=\"epoch\"")));
  EXPECT_EQ(wrapper.Wait(5), 0);
}

TEST(CollectProcess, PassesALineOver64KiBThroughWithoutParsingIt) {
  Wrapper wrapper({"--objective=accuracy", "--grace-seconds=5", "--", "sh", "-c",
                   "awk 'BEGIN { s = \"accuracy=0.9 \"; while (length(s) < 70000) s = s \"x\"; "
                   "print s; print \"accuracy=0.5\" }'"},
                  kServing);
  int port = wrapper.Port();
  ASSERT_GT(port, 0) << wrapper.err;
  // The wrapper passes output through before it answers again: read it all first.
  ASSERT_TRUE(wrapper.ReadUntil([&] { return wrapper.out.size() == 70000u + 1 + 13; }, 3));
  std::string answer = wrapper.ScrapeUntil(port, Series("accuracy", "1"));
  EXPECT_THAT(answer, HasSubstr(Series("accuracy", "1") + " 0.5\n"));
  EXPECT_EQ(wrapper.Wait(5), 0);
  EXPECT_THAT(wrapper.out, ::testing::EndsWith("x\naccuracy=0.5\n"));
  EXPECT_THAT(wrapper.err, HasSubstr("1 lines over 65536 bytes were passed through"));
}

TEST(CollectProcess, KeepsTenThousandValuesAndSaysFurtherOnesAreDropped) {
  Wrapper wrapper({"--objective=accuracy", "--grace-seconds=5", "--", "sh", "-c",
                   "seq 1 10005 | sed 's/^/accuracy=/'"},
                  kServing);
  int port = wrapper.Port();
  ASSERT_GT(port, 0) << wrapper.err;
  // The wrapper passes output through before it answers again: read it all first.
  ASSERT_TRUE(wrapper.ReadUntil([&] { return wrapper.out.ends_with("accuracy=10005\n"); }, 3));
  std::string answer =
      wrapper.ScrapeUntil(port, "resource_completed{sweep=\"s\",trial=\"t\"} 10005");
  EXPECT_THAT(answer, HasSubstr(Series("accuracy", "10000") + " 10000\n"));
  EXPECT_THAT(answer, Not(HasSubstr(Series("accuracy", "10001"))));
  EXPECT_EQ(wrapper.Wait(5), 0);
  EXPECT_THAT(wrapper.err,
              HasSubstr("budgetsweep-collect: 10000 values kept; further values are dropped\n"));
}

TEST(CollectProcess, ForwardsSigtermToTheCommand) {
  Wrapper wrapper({"--objective=accuracy", "--", "sh", "-c",
                   "trap 'echo got-term; exit 0' TERM; echo ready; "
                   "while :; do sleep 0.05; done"},
                  {});
  ASSERT_TRUE(wrapper.ReadUntil([&] { return wrapper.out == "ready\n"; }, 3));
  kill(wrapper.pid(), SIGTERM);
  EXPECT_EQ(wrapper.Wait(5), 0);
  EXPECT_EQ(wrapper.out, "ready\ngot-term\n");
}

TEST(CollectProcess, StopsACommandThatTrainsPastUntilAndExitsZero) {
  Wrapper wrapper({"--objective=accuracy", "--", "sh", "-c",
                   "trap 'exit 5' TERM; i=0; "
                   "while :; do i=$((i+1)); echo accuracy=0.$i; sleep 0.05; done"},
                  {{"BUDGETSWEEP_UNTIL", "3"}});
  EXPECT_EQ(wrapper.Wait(5), 0);
  EXPECT_THAT(wrapper.out, HasSubstr("accuracy=0.3\n"));
  EXPECT_THAT(wrapper.out, Not(HasSubstr("accuracy=0.6\n")));
}

TEST(CollectProcess, KillsACommandThatIgnoresSigtermAfterTheStopGrace) {
  Wrapper wrapper({"--objective=accuracy", "--stop-grace-seconds=0.3", "--", "sh", "-c",
                   "trap '' TERM; echo accuracy=1; while :; do sleep 0.05; done"},
                  {{"BUDGETSWEEP_UNTIL", "1"}});
  EXPECT_EQ(wrapper.Wait(5), 0);
  EXPECT_GE(wrapper.elapsed_seconds, 0.3);
}

TEST(CollectProcess, RefusesBadUsageWithoutRunningTheCommand) {
  std::filesystem::path marker = testing::TempDir() + "collect_bad_usage_marker";
  std::filesystem::remove(marker);
  for (auto [option, error] : {std::pair{"--bogus=1", "unknown option --bogus"},
                               std::pair{"--filter=(\\w+)=\\d+", "--filter="}}) {
    Wrapper wrapper({"--objective=accuracy", option, "--", "touch", marker.string()}, {});
    EXPECT_EQ(wrapper.Wait(5), 2);
    EXPECT_THAT(wrapper.err, HasSubstr(error));
    EXPECT_FALSE(std::filesystem::exists(marker));
  }
}

class CollectFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::path(testing::TempDir()) /
        ("collect_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    env_ = kServing;
    env_["BUDGETSWEEP_TRIAL_DIR"] = dir_.string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  Env env_;
};

TEST_F(CollectFile, TailsTextLinesAppendedToTheFileAfterItAppears) {
  Wrapper wrapper({"--objective=accuracy", "--source=file", "--path=logs/m.txt",
                   "--grace-seconds=5", "--", "sh", "-c",
                   "cd \"$BUDGETSWEEP_TRIAL_DIR\"; sleep 0.2; mkdir logs; "
                   "echo accuracy=0.5 >> logs/m.txt; sleep 0.3; echo accuracy=0.6 >> logs/m.txt; "
                   "echo printed=1"},
                  env_);
  int port = wrapper.Port();
  ASSERT_GT(port, 0) << wrapper.err;
  std::string answer = wrapper.ScrapeUntil(port, Series("accuracy", "2"));
  EXPECT_THAT(answer, HasSubstr(Series("accuracy", "1") + " 0.5\n"));
  EXPECT_THAT(answer, HasSubstr(Series("accuracy", "2") + " 0.6\n"));
  EXPECT_THAT(answer, Not(HasSubstr("printed")));
  EXPECT_EQ(wrapper.Wait(5), 0);
  EXPECT_EQ(wrapper.out, "printed=1\n");
}

TEST_F(CollectFile, ReadsJsonLines) {
  Wrapper wrapper(
      {"--objective=accuracy", "--source=file", "--path=m.json", "--format=json",
       "--resource-key=epoch", "--grace-seconds=5", "--", "sh", "-c",
       "echo '{\"epoch\": 4, \"accuracy\": 0.25}' >> \"$BUDGETSWEEP_TRIAL_DIR/m.json\""},
      env_);
  int port = wrapper.Port();
  ASSERT_GT(port, 0) << wrapper.err;
  EXPECT_THAT(wrapper.ScrapeUntil(port, Series("accuracy", "4")),
              HasSubstr(Series("accuracy", "4") + " 0.25\n"));
  EXPECT_EQ(wrapper.Wait(5), 0);
}

TEST_F(CollectFile, RefusesAFileOutsideTheTrialDirectoryNamingPath) {
  std::filesystem::create_symlink("/etc/passwd", dir_ / "m.txt");
  Wrapper wrapper({"--objective=accuracy", "--source=file", "--path=m.txt", "--", "sh", "-c",
                   "sleep 0.3; exit 4"},
                  {{"BUDGETSWEEP_TRIAL_DIR", dir_.string()}});
  EXPECT_EQ(wrapper.Wait(5), 4);
  EXPECT_THAT(wrapper.err, HasSubstr("--path=m.txt"));
  EXPECT_THAT(wrapper.err, HasSubstr("outside"));
}

}  // namespace
