// c2c-sched: loads the claim2core sched_ext scheduler, keeps it attached for --duration seconds
// (0 = until SIGINT/SIGTERM), and reports why it stopped.
//
// Output: JSON lines on stdout: {"event":"enabled",...}, optional periodic {"event":"stats",...},
// and a final {"event":"exit",...}. Exit codes: 0 detached by us, 1 load/attach failed,
// 2 the kernel or the BPF program ended the scheduler (error, stall, sysrq).
#include <csignal>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <bpf/libbpf.h>
#include <nlohmann/json.hpp>

#include "c2c_version.hpp"
#include "host/bpf_object_path.hpp"
#include "sched/loader.hpp"

namespace {
volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

int libbpf_to_stderr(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  return std::vfprintf(stderr, fmt, args);
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"claim2core sched_ext scheduler loader"};
  c2c::sched::LoaderOptions opts;
  // Default: claim2core.bpf.o from the installed BPF directory (or the build tree it runs from).
  if (auto p = c2c::host::find_bpf_object("claim2core")) opts.object_path = p->string();
  app.set_version_flag("--version", std::string("c2c-sched ") + c2c::kVersionString);
  double duration = 0;
  double stats_every = 0;
  bool stats = false;
  app.add_option("--object", opts.object_path, "path of claim2core.bpf.o")->required(opts.object_path.empty());
  app.add_option("--pin-root", opts.pin_root, "bpffs directory of the pinned maps");
  app.add_option("--duration", duration, "seconds to stay attached (0 = until a signal)")->check(CLI::NonNegativeNumber);
  app.add_flag("--stats", stats, "print the statistics when stopping");
  app.add_option("--stats-interval", stats_every, "also print statistics every N seconds")->check(CLI::NonNegativeNumber);
  std::vector<std::string> tunable_args;
  std::string tunable_help = "set a scheduler tunable, NAME=VALUE (repeatable):";
  for (const auto& t : c2c::sched::tunable_specs())
    tunable_help += std::string("\n  ") + t.name + " (default " + std::to_string(t.default_value) + ", " +
                    std::to_string(t.min) + ".." + std::to_string(t.max) + "): " + t.what;
  app.add_option("--tunable", tunable_args, tunable_help);
  app.add_option("--exit-dump-bytes", opts.exit_dump_bytes,
                 "bytes of the kernel's debug dump kept in the exit record (0: none)");
  CLI11_PARSE(app, argc, argv);
  for (const auto& t : tunable_args) {
    std::string e = c2c::sched::parse_tunable(t, opts.tunables);
    if (e.empty()) e = c2c::sched::check_tunables(opts.tunables);
    if (!e.empty()) {
      std::cerr << "c2c-sched: " << e << "\n";
      return 1;
    }
  }

  libbpf_set_print(libbpf_to_stderr);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  std::unique_ptr<c2c::sched::Scheduler> s;
  try {
    s = c2c::sched::Scheduler::load(opts);
  } catch (const c2c::sched::LoadError& e) {
    std::cout << nlohmann::json{{"event", "load_failed"}, {"error", e.what()}}.dump() << std::endl;
    return 1;
  }
  std::cout << nlohmann::json{{"event", "enabled"},
                              {"state", c2c::sched::scx_state()},
                              {"ops", c2c::sched::scx_root_ops()},
                              {"policy_map_reused", s->policy_map_reused()},
                              {"tunables", opts.tunables}}
                   .dump()
            << std::endl;

  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto next_stats = start + std::chrono::duration<double>(stats_every);
  std::optional<c2c::sched::ExitReport> exited;
  while (!g_stop) {
    if ((exited = s->exit_report())) break;
    // Belt and braces: the kernel left sched_ext while we still hold the link.
    if (c2c::sched::scx_state() != "enabled") {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      exited = s->exit_report();
      if (!exited) exited = c2c::sched::ExitReport{-1, 0, "state left 'enabled' without an exit record", "", ""};
      break;
    }
    const auto now = clock::now();
    if (duration > 0 && now - start >= std::chrono::duration<double>(duration)) break;
    if (stats_every > 0 && now >= next_stats) {
      std::cout << "{\"event\":\"stats\",\"stats\":" << c2c::sched::stats_json(s->stats()) << "}" << std::endl;
      next_stats += std::chrono::duration<double>(stats_every);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const bool by_kernel = exited.has_value();
  std::string stats_text;
  if (stats) stats_text = c2c::sched::stats_json(s->stats());
  s->detach();
  // After our own detach the kernel records UNREG; give it a moment to publish the record.
  for (int i = 0; i < 40 && !exited; ++i) {
    exited = s->exit_report();
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  std::cout << "{\"event\":\"exit\",\"by_kernel\":" << (by_kernel ? "true" : "false")
            << ",\"state\":\"" << c2c::sched::scx_state() << "\""
            << ",\"exit\":" << (exited ? c2c::sched::exit_json(*exited) : "null");
  if (stats) std::cout << ",\"stats\":" << stats_text;
  std::cout << "}" << std::endl;
  return by_kernel ? 2 : 0;
}
