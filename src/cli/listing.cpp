#include "cli/listing.hpp"

#include <map>
#include <stdexcept>

#include "cli/structured_output.hpp"
#include "cli/tables.hpp"

namespace c2c::cli {

using nlohmann::json;

GetFormat get_format_from_string(const std::string& s) {
  if (s == "table") return GetFormat::Table;
  if (s == "wide") return GetFormat::Wide;
  if (s == "name") return GetFormat::Name;
  if (s == "json") return GetFormat::Json;
  if (s == "yaml") return GetFormat::Yaml;
  throw std::invalid_argument("output format must be table, wide, name, json or yaml, got '" + s + "'");
}

json list_of(json items) { return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}}; }

namespace {

std::vector<size_t> shown_columns(const Listing& l, bool wide) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < l.columns.size(); ++i)
    if (wide || !l.columns[i].wide_only) idx.push_back(i);
  return idx;
}

std::vector<std::string> pick(const std::vector<std::string>& cells, const std::vector<size_t>& idx) {
  std::vector<std::string> out;
  for (size_t i : idx) out.push_back(i < cells.size() ? cells[i] : "");
  return out;
}

TextTable table_of(const Listing& l, const std::vector<size_t>& idx, const char* first_header = nullptr) {
  std::vector<std::string> header;
  if (first_header) header.push_back(first_header);
  for (size_t i : idx) header.push_back(l.columns[i].header);
  return TextTable(std::move(header));
}

}  // namespace

std::string render_listing(const Listing& l, GetFormat f) {
  switch (f) {
    case GetFormat::Name: {
      std::string out;
      for (const auto& r : l.rows) out += r.name + "\n";
      return out;
    }
    case GetFormat::Json:
    case GetFormat::Yaml: {
      json items = json::array();
      for (const auto& r : l.rows) items.push_back(r.object);
      json list = list_of(std::move(items));
      return f == GetFormat::Json ? list.dump(2) + "\n" : json_to_yaml(list);
    }
    case GetFormat::Table:
    case GetFormat::Wide: break;
  }
  if (l.rows.empty()) return l.empty_message + "\n";
  auto idx = shown_columns(l, f == GetFormat::Wide);
  TextTable t = table_of(l, idx);
  for (const auto& r : l.rows) t.add(pick(r.cells, idx));
  return t.render();
}

std::string change_type_name(ChangeType t) {
  switch (t) {
    case ChangeType::Added: return "ADDED";
    case ChangeType::Modified: return "MODIFIED";
    case ChangeType::Deleted: return "DELETED";
  }
  return "UNKNOWN";
}

std::vector<ListingChange> diff_listings(const Listing& before, const Listing& after) {
  std::map<std::string, const ListingRow*> old_rows, new_rows;
  for (const auto& r : before.rows) old_rows[r.name] = &r;
  for (const auto& r : after.rows) new_rows[r.name] = &r;
  std::vector<ListingChange> out;
  for (const auto& r : after.rows) {
    auto it = old_rows.find(r.name);
    if (it == old_rows.end()) out.push_back({ChangeType::Added, r});
    else if (it->second->object != r.object || it->second->cells != r.cells) out.push_back({ChangeType::Modified, r});
  }
  for (const auto& r : before.rows)
    if (!new_rows.count(r.name)) out.push_back({ChangeType::Deleted, r});
  return out;
}

std::string WatchPrinter::print(const Listing& shape, const std::vector<ListingChange>& changes) {
  std::string out;
  switch (format_) {
    case GetFormat::Name:
      for (const auto& c : changes) out += c.row.name + "\n";
      return out;
    case GetFormat::Json:
    case GetFormat::Yaml:
      for (const auto& c : changes) {
        json ev = {{"type", change_type_name(c.type)}, {"object", c.row.object}};
        out += format_ == GetFormat::Json ? ev.dump() + "\n" : "---\n" + json_to_yaml(ev);
      }
      return out;
    case GetFormat::Table:
    case GetFormat::Wide: break;
  }
  // The header is printed even with no rows, so a reader sees that the watch has started.
  if (header_done_ && changes.empty()) return out;
  auto idx = shown_columns(shape, format_ == GetFormat::Wide);
  TextTable t = table_of(shape, idx, "EVENT");
  for (const auto& c : changes) {
    auto cells = pick(c.row.cells, idx);
    cells.insert(cells.begin(), change_type_name(c.type));
    t.add(std::move(cells));
  }
  out = t.render(/*header=*/!header_done_, widths_);
  widths_ = t.widths(widths_);
  header_done_ = true;
  return out;
}

}  // namespace c2c::cli
