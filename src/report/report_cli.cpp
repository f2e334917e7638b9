#include "report/report_cli.hpp"

#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "report/report.hpp"
#include "trace/render.hpp"

namespace c2c::report {

void add_cli(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "report", "Explain a failing fuzz_core_events input or trace: minimized trace, invariant, lineage, regression file");
  auto path = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("text");
  cmd->add_option("input", *path, "A fuzz_core_events input (crash-* file) or a JSON Lines trace")->required();
  cmd->add_option("--out", *out, "Write <invariant>-<hash>.jsonl and .expect into this directory (default: write nothing)");
  cmd->add_option("--format", *format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([=, &exit_code] {
    std::ifstream in(*path, std::ios::binary);
    if (!in) {
      std::cerr << "claim2core report: cannot open " << *path << "\n";
      exit_code = 2;
      return;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto loaded = load_input(bytes);
    if (auto* err = std::get_if<std::string>(&loaded)) {
      std::cerr << "claim2core report: " << *path << ": " << *err << "\n";
      exit_code = 2;
      return;
    }
    const Input& input = std::get<Input>(loaded);
    auto report = make_report(input);
    if (!report) {
      std::cout << "claim2core report: no failure: every check held after each of the " << input.events.size()
                << " events (" << input.kind << ")\n";
      exit_code = 0;
      return;
    }
    if (*format == "json") {
      nlohmann::json j = report->expect;
      j["name"] = report->name;
      j["originalEvents"] = report->original_events;
      j["minimizedEvents"] = report->minimized.size();
      j["replayable"] = report->replayable;
      j["trace"] = report->trace_jsonl;
      if (report->lineage) j["lineage"] = trace::to_json(*report->lineage);
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << render(*report);
    }
    if (!out->empty()) {
      const auto written = write_regression(*report, *out);
      std::cerr << "claim2core report: wrote " << written.string() << " and " << report->name << ".expect\n";
    }
    exit_code = 1;
  });
}

}  // namespace c2c::report
