#include "host/run_signals.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace c2c::host {

namespace {

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\n' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<uint64_t> u64_of(std::string_view t) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || t.empty()) return std::nullopt;
  return v;
}

std::optional<double> percent_of(std::string_view t) {
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || t.empty() || v < 0 || v > 100) return std::nullopt;
  return v;
}

std::optional<std::string> slurp(const std::string& path, ParseError* err) {
  std::ifstream f(path);
  if (!f) {
    set_error(err, path, "cannot open (the thread or cgroup is gone, or PSI/schedstat is not enabled)");
    return std::nullopt;
  }
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::optional<PressureLine> pressure_line(const std::vector<std::string_view>& w, const std::string& field,
                                          ParseError* err) {
  PressureLine l;
  bool a10 = false, a60 = false, a300 = false, tot = false;
  for (size_t i = 1; i < w.size(); ++i) {
    const auto eq = w[i].find('=');
    if (eq == std::string_view::npos) {
      set_error(err, field, "expected key=value, got '" + std::string(w[i]) + "'");
      return std::nullopt;
    }
    const auto key = w[i].substr(0, eq), value = w[i].substr(eq + 1);
    auto pct = [&](double& out, bool& seen) {
      auto v = percent_of(value);
      if (!v) set_error(err, field + "." + std::string(key), "not a percentage in [0, 100]: '" + std::string(value) + "'");
      if (v) out = *v, seen = true;
      return v.has_value();
    };
    if (key == "avg10") { if (!pct(l.avg10, a10)) return std::nullopt; }
    else if (key == "avg60") { if (!pct(l.avg60, a60)) return std::nullopt; }
    else if (key == "avg300") { if (!pct(l.avg300, a300)) return std::nullopt; }
    else if (key == "total") {
      auto v = u64_of(value);
      if (!v) {
        set_error(err, field + ".total", "not a count of microseconds: '" + std::string(value) + "'");
        return std::nullopt;
      }
      l.total_us = *v;
      tot = true;
    }
    // Other keys: a newer kernel's; ignored (PSI's format is documented as extensible).
  }
  if (!a10 || !a60 || !a300 || !tot) {
    set_error(err, field, "needs avg10, avg60, avg300 and total");
    return std::nullopt;
  }
  return l;
}

}  // namespace

std::optional<SchedStat> parse_schedstat(std::string_view text, ParseError* err) {
  const auto w = words(text);
  if (w.size() != 3) {
    set_error(err, "schedstat", "expected 3 numbers, got " + std::to_string(w.size()));
    return std::nullopt;
  }
  SchedStat s;
  const char* names[] = {"schedstat.run_ns", "schedstat.wait_ns", "schedstat.timeslices"};
  uint64_t* outs[] = {&s.run_ns, &s.wait_ns, &s.timeslices};
  for (size_t i = 0; i < 3; ++i) {
    auto v = u64_of(w[i]);
    if (!v) {
      set_error(err, names[i], "not an unsigned integer: '" + std::string(w[i]) + "'");
      return std::nullopt;
    }
    *outs[i] = *v;
  }
  return s;
}

std::optional<Pressure> parse_pressure(std::string_view text, ParseError* err) {
  Pressure p;
  bool some = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const auto w = words(text.substr(start, end - start));
    start = end + 1;
    if (w.empty()) continue;
    if (w[0] == "some") {
      auto l = pressure_line(w, "pressure.some", err);
      if (!l) return std::nullopt;
      p.some = *l;
      some = true;
    } else if (w[0] == "full") {
      auto l = pressure_line(w, "pressure.full", err);
      if (!l) return std::nullopt;
      p.full = *l;
    } else {
      set_error(err, "pressure", "unknown line '" + std::string(w[0]) + "' (some, full)");
      return std::nullopt;
    }
  }
  if (!some) {
    set_error(err, "pressure.some", "missing");
    return std::nullopt;
  }
  return p;
}

std::optional<ThreadWindow> thread_window(uint32_t tid, const SchedStat& before, const SchedStat& after,
                                          uint64_t window_ns) {
  if (after.run_ns < before.run_ns || after.wait_ns < before.wait_ns || after.timeslices < before.timeslices)
    return std::nullopt;
  ThreadWindow w;
  w.tid = tid;
  w.run_ns = after.run_ns - before.run_ns;
  w.wait_ns = after.wait_ns - before.wait_ns;
  w.runs = after.timeslices - before.timeslices;
  w.cpu_share = window_ns == 0 ? 0 : static_cast<double>(w.run_ns) / static_cast<double>(window_ns);
  if (w.runs > 0) w.mean_delay_ns = w.wait_ns / w.runs;
  return w;
}

std::optional<uint64_t> run_delay_p99(const std::vector<ThreadWindow>& threads) {
  std::vector<uint64_t> d;
  for (const auto& t : threads)
    if (t.mean_delay_ns) d.push_back(*t.mean_delay_ns);
  if (d.empty()) return std::nullopt;
  std::sort(d.begin(), d.end());
  // Nearest rank: the smallest value with at least 99 % of the values at or below it.
  const size_t rank = (d.size() * 99 + 99) / 100;  // ceil(0.99 n), >= 1
  return d[rank - 1];
}

std::optional<SchedStat> read_schedstat(const std::string& proc_root, uint32_t tgid, uint32_t tid, ParseError* err) {
  const std::string path =
      proc_root + "/" + std::to_string(tgid) + "/task/" + std::to_string(tid) + "/schedstat";
  auto text = slurp(path, err);
  if (!text) return std::nullopt;
  auto s = parse_schedstat(*text, err);
  if (!s && err) err->field = path + ": " + err->field;
  return s;
}

std::optional<Pressure> read_cpu_pressure(const std::string& cgroup_dir, ParseError* err) {
  const std::string path = cgroup_dir + "/cpu.pressure";
  auto text = slurp(path, err);
  if (!text) return std::nullopt;
  auto p = parse_pressure(*text, err);
  if (!p && err) err->field = path + ": " + err->field;
  return p;
}

}  // namespace c2c::host
