// One `claim2core get` result in a shape every output format reads: columns (some only with
// `-o wide`), and per row its name (`-o name`), its cells and its object (`-o json|yaml`). A
// resource's columns are written once, in its listing builder (tables.cpp), and each output
// format, `get -w` included, is generic over them. Pure: tested without a daemon.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace c2c::cli {

struct ListingColumn {
  std::string header;
  bool wide_only = false;  // shown with -o wide only
};

struct ListingRow {
  std::string name;                 // "<kind>/<name>", unique within the listing (-o name, watch)
  std::vector<std::string> cells;   // one per column, in column order
  nlohmann::json object;            // the item of -o json|yaml
};

struct Listing {
  std::vector<ListingColumn> columns;
  std::vector<ListingRow> rows;
  std::string empty_message;        // the table when there are no rows, e.g. "No intents."

  void add_column(std::string header, bool wide_only = false) { columns.push_back({std::move(header), wide_only}); }
};

enum class GetFormat { Table, Wide, Name, Json, Yaml };
GetFormat get_format_from_string(const std::string& s);  // table | wide | name | json | yaml

// A kubectl-style List: {"apiVersion": "v1", "kind": "List", "items": [...]}.
nlohmann::json list_of(nlohmann::json items);

// The whole listing: a table (wide: every column), names one a line, or one List (JSON or YAML).
std::string render_listing(const Listing& l, GetFormat f);

// ---- get -w --------------------------------------------------------------------------------------

enum class ChangeType { Added, Modified, Deleted };
std::string change_type_name(ChangeType t);  // ADDED | MODIFIED | DELETED

struct ListingChange {
  ChangeType type;
  ListingRow row;  // for Deleted: the row as it was last seen
};

// What changed from `before` to `after`, rows matched by name: added and modified rows in the
// order of `after`, then deleted rows in the order of `before`. A row is modified when its object
// or its cells differ.
std::vector<ListingChange> diff_listings(const Listing& before, const Listing& after);

// Prints a watch: the first call (every row Added) with the table's header, the later ones as rows
// aligned under it. Tables get a leading EVENT column; -o name prints names; -o json prints one
// {"type": ..., "object": ...} a line (JSON Lines), -o yaml one such document each.
class WatchPrinter {
 public:
  explicit WatchPrinter(GetFormat f) : format_(f) {}
  std::string print(const Listing& shape, const std::vector<ListingChange>& changes);

 private:
  GetFormat format_;
  bool header_done_ = false;
  std::vector<size_t> widths_;
};

}  // namespace c2c::cli
