#include "cli/replay_command.hpp"

#include <fstream>
#include <iostream>

#include "trace/replay.hpp"

namespace c2c::cli {

void add_replay_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("replay", "Replay a trace through the core and check INV-1..INV-8 after every step");
  auto path = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("json");
  auto final_only = std::make_shared<bool>(false);
  auto stop_first = std::make_shared<bool>(false);
  cmd->add_option("trace", *path, "Trace file (JSON Lines, spec/trace-format.md); - for stdin")->required();
  cmd->add_option("--format", *format, "Output format")->check(CLI::IsMember({"json", "table"}));
  cmd->add_flag("--final-only", *final_only, "Check the invariants on the final state only (large traces)");
  cmd->add_flag("--stop-at-first", *stop_first, "Stop at the first violating step");
  cmd->callback([=, &exit_code] {
    std::ifstream file;
    std::istream* in = &std::cin;
    if (*path != "-") {
      file.open(*path);
      if (!file) {
        std::cerr << "claim2core replay: cannot open " << *path << "\n";
        exit_code = 2;
        return;
      }
      in = &file;
    }
    auto parsed = codec::parse_trace(*in);
    if (auto* err = std::get_if<codec::ParseError>(&parsed)) {
      std::cerr << "claim2core replay: " << *path << ": " << err->to_string() << "\n";
      exit_code = 2;
      return;
    }
    auto outcome = trace::replay(std::get<std::vector<codec::TraceEvent>>(parsed), !*final_only, *stop_first);
    if (*format == "table") std::cout << trace::to_table(outcome);
    else std::cout << trace::to_json(outcome).dump(2) << "\n";
    if (outcome.invalid) {
      std::cerr << "claim2core replay: " << *path << ": " << outcome.invalid->to_string() << "\n";
      exit_code = 2;
    } else if (!outcome.violations.empty()) {
      const auto& v = outcome.violations.front();
      std::cerr << "claim2core replay: " << v.violation.invariant << " violated at step " << v.step << " (line "
                << v.line << ", " << v.event_kind << "): " << v.violation.message << "\n";
      exit_code = 1;
    } else {
      exit_code = 0;
    }
  });
}

}  // namespace c2c::cli
