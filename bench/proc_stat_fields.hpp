// /proc/<pid>/stat (or a thread's, /proc/<pid>/task/<tid>/stat) split into its fields, for the
// benchmarks' figures. The name (field 2) may hold spaces and ')', so the fixed fields are taken
// from after the last ')': fields[0] is field 3 (the state), fields[i] is field i + 3.
#pragma once

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace c2c::bench {

// Empty when the file cannot be read; *name gets field 2 when given.
inline std::vector<std::string> stat_fields(const std::string& path, std::string* name = nullptr) {
  std::ifstream in(path);
  const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto open = s.find('('), close = s.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 > s.size()) return {};
  if (name) *name = s.substr(open + 1, close - open - 1);
  std::istringstream rest(s.substr(close + 2));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

}  // namespace c2c::bench
