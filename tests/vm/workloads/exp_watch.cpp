// c2c-exp-watch: what the experiment reads from the kernel side of the pinned maps, read-only.
//
//   apply     --tid T -- CMD...   runs CMD (e.g. `claim2core apply -f ...`) and times, from its
//                                 start, the entry for T in the pinned map and then the first
//                                 dispatch of T's class after it (scheduler apply latency)
//   rollback  --tid T -- CMD...   runs CMD (`claim2core delete ...`) and times until T's entry is
//                                 gone: the scheduler then serves T on its default path
//   stale                         entries whose task is gone or whose start time differs (INV-2)
//
// Polls every 200 us; figures in ms with that resolution. One JSON line; exit 1 on a timeout.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "claim2core_abi.h"
#include "exp_stats.hpp"
#include "mirror/kernel_map.hpp"
#include "mirror/pinned_maps.hpp"
#include "sched/loader.hpp"
#include "vm_proc.hpp"

namespace {

using nlohmann::json;

struct Maps {
  explicit Maps(const std::string& pin_root) : stats_pin(pin_root + "/" + C2C_STATS_MAP_NAME) {
    c2c::mirror::PinOptions o;
    o.pin_root = pin_root;
    o.create = false;
    auto m = c2c::mirror::PinnedMaps::open(o);
    if (!m) throw std::runtime_error("pinned maps " + pin_root + ": " + m.error());
    maps = std::move(m.value());
    io = std::make_unique<c2c::mirror::KernelPolicyMap>(maps->policy_fd(), maps->policy_max_entries());
  }
  std::optional<c2c_policy_value> entry(uint32_t tid) {
    c2c_policy_value v{};
    return io->lookup(tid, &v) == 0 ? std::optional(v) : std::nullopt;
  }
  uint64_t dispatched(uint8_t cls) { return c2c::sched::read_pinned_stats(stats_pin).dispatched[cls]; }
  std::string stats_pin;
  std::unique_ptr<c2c::mirror::PinnedMaps> maps;
  std::unique_ptr<c2c::mirror::KernelPolicyMap> io;
};

pid_t spawn(const std::vector<std::string>& cmd) {
  const pid_t p = fork();
  if (p == 0) {
    dup2(2, 1);  // the command's own output must not mix with this tool's JSON line
    std::vector<char*> argv;
    for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  if (p < 0) throw std::runtime_error("fork failed");
  return p;
}

double ms_since(uint64_t t0) { return static_cast<double>(c2c::exp::mono_ns() - t0) / 1e6; }

int watch(Maps& m, uint32_t tid, bool until_gone, const std::vector<std::string>& cmd, int timeout_ms) {
  const uint64_t t0 = c2c::exp::mono_ns();
  const pid_t child = spawn(cmd);
  std::optional<double> cmd_ms, entry_ms, dispatch_ms;
  uint64_t base = 0;
  uint8_t cls = 0;
  int status = 0;
  while (ms_since(t0) < timeout_ms) {
    if (!cmd_ms && waitpid(child, &status, WNOHANG) == child) cmd_ms = ms_since(t0);
    const auto e = m.entry(tid);
    if (until_gone) {
      if (!e) entry_ms = ms_since(t0);
    } else if (e && !entry_ms) {
      entry_ms = ms_since(t0);
      cls = e->exec_class;
      base = m.dispatched(cls);
    } else if (entry_ms && m.dispatched(cls) > base) {
      dispatch_ms = ms_since(t0);
    }
    if (entry_ms && (until_gone || dispatch_ms) && cmd_ms) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (!cmd_ms) {
    waitpid(child, &status, 0);
    cmd_ms = ms_since(t0);
  }
  const auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  json j{{"tid", tid}, {"command_ms", *cmd_ms}, {"command_rc", WIFEXITED(status) ? WEXITSTATUS(status) : -1}};
  if (until_gone) j["entry_gone_ms"] = opt(entry_ms);
  else j.update(json{{"entry_ms", opt(entry_ms)}, {"first_dispatch_ms", opt(dispatch_ms)}, {"class", cls}});
  std::cout << j.dump() << std::endl;
  return entry_ms && (until_gone || dispatch_ms) ? 0 : 1;
}

int stale(Maps& m) {
  uint32_t key = 0, next = 0;
  const uint32_t* prev = nullptr;
  int entries = 0, gone = 0, other_start = 0;
  while (m.io->next_key(prev, &next) == 0) {
    key = next;
    prev = &key;
    const auto e = m.entry(key);
    if (!e) continue;
    ++entries;
    const auto st = c2c::vm::read_task_stat(static_cast<pid_t>(e->tgid), static_cast<pid_t>(key));
    if (!st) ++gone;
    else if (st->start_ticks != e->start_ticks) ++other_start;
  }
  std::cout << json{{"entries", entries}, {"task_gone", gone}, {"start_differs", other_start},
                    {"stale", gone + other_start}}.dump()
            << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the experiment's read-only view of the pinned maps"};
  app.require_subcommand(1);
  std::string pin_root = C2C_PIN_ROOT;
  uint32_t tid = 0;
  int timeout_ms = 30000;
  std::vector<std::string> cmd;
  app.add_option("--pin-root", pin_root)->capture_default_str();
  for (const char* name : {"apply", "rollback"}) {
    auto* c = app.add_subcommand(name, name == std::string("apply") ? "time CMD until T's entry and its first dispatch"
                                                                    : "time CMD until T's entry is gone");
    c->add_option("--tid", tid)->required();
    c->add_option("--timeout-ms", timeout_ms)->capture_default_str();
    c->add_option("cmd", cmd, "the command (after --)")->required();
  }
  app.add_subcommand("stale", "entries whose task is gone or another task's");
  CLI11_PARSE(app, argc, argv);
  try {
    Maps m(pin_root);
    if (app.got_subcommand("stale")) return stale(m);
    return watch(m, tid, app.got_subcommand("rollback"), cmd, timeout_ms);
  } catch (const std::exception& e) {
    std::cout << json{{"error", e.what()}}.dump() << std::endl;
    return 2;
  }
}
