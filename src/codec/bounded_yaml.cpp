#include "codec/bounded_yaml.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <new>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codec/yaml_json.hpp"

namespace c2c::codec {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// The child's reply: one status byte ('J' = JSON array follows, 'E' = error message follows).
void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the parent went away; nothing to tell anyone
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

[[noreturn]] void run_child(int fd, std::string_view text, const YamlLimits& limits) {
  // Time-shared whatever the parent runs at (claim2cored may run SCHED_FIFO, realtime_priority):
  // a parse of untrusted input must not hold a CPU above the node's other work.
  sched_param normal{};
  ::sched_setscheduler(0, SCHED_OTHER, &normal);
  rlimit as{limits.max_memory_bytes, limits.max_memory_bytes};
  ::setrlimit(RLIMIT_AS, &as);
  // CPU seconds, rounded up, so a spinning parse dies even if the parent is starved of CPU.
  auto secs = static_cast<rlim_t>(std::chrono::ceil<std::chrono::seconds>(limits.deadline).count() + 1);
  rlimit cpu{secs, secs};
  ::setrlimit(RLIMIT_CPU, &cpu);
  std::string reply;
  try {
    json docs = json::array();
    for (auto& d : parse_documents(text))
      if (!d.is_null()) docs.push_back(std::move(d));
    reply = "J" + docs.dump();
  } catch (const std::bad_alloc&) {
    reply = "Eout of memory (limit " + std::to_string(limits.max_memory_bytes >> 20) + " MiB): too many aliases?";
  } catch (const std::exception& e) {
    reply = std::string("E") + e.what();
  }
  write_all(fd, reply);
  ::_exit(0);  // no atexit handlers, no flushing of the parent's stdio buffers
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGXCPU) return "the parse used up its CPU time";
    return std::string("the parser crashed (") + strsignal(sig) + ")";
  }
  return "the parser exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

std::vector<json> parse_documents_bounded(std::string_view text, const YamlLimits& limits) {
  if (text.size() > limits.max_input_bytes)
    throw YamlError("input is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                    std::to_string(limits.max_input_bytes));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw YamlError(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw YamlError(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    run_child(fds[1], text, limits);
  }
  ::close(fds[1]);

  std::string reply;
  std::string failure;
  const auto deadline = Clock::now() + limits.deadline;
  char buf[65536];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      failure = "no result within " + std::to_string(limits.deadline.count()) +
                " ms (a yaml-cpp 0.7 hang shape?); the input is refused";
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;  // timeout: the deadline check above decides
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done
    reply.append(buf, static_cast<size_t>(n));
    if (reply.size() > limits.max_output_bytes) {
      failure = "the documents expand to more than " + std::to_string(limits.max_output_bytes >> 20) +
                " MiB of JSON (aliases?); the input is refused";
      break;
    }
  }
  ::close(fds[0]);
  if (!failure.empty()) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!failure.empty()) throw YamlError(failure);
  if (reply.empty()) throw YamlError(describe_exit(status));
  if (reply[0] == 'E') throw YamlError(reply.substr(1));
  json docs = json::parse(std::string_view(reply).substr(1), nullptr, /*allow_exceptions=*/false);
  if (!docs.is_array()) throw YamlError("the parser returned malformed JSON");
  return docs.get<std::vector<json>>();
}

}  // namespace c2c::codec
