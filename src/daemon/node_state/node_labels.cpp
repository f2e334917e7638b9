#include "daemon/node_state/node_labels.hpp"

#include "core/label_selector.hpp"

namespace c2c::daemon {

NodeLabelMap effective_node_labels(const std::string& node_name, const NodeLabelMap& config,
                                   const std::optional<NodeLabelMap>& node_object) {
  NodeLabelMap out = node_object ? *node_object : config;
  // emplace: a source's own value stays. A node name that is no label value (longer than 63, an
  // FQDN with an odd character) gets no hostname label rather than a label the core refuses.
  if (!node_name.empty() && !label_value_error(node_name)) out.emplace(kHostnameLabel, node_name);
  return out;
}

}  // namespace c2c::daemon
