// The daemon's replies as JSON, for every front end (the CLI's -o json/yaml, claim2core-rest's
// explain, preview and event stream): lowerCamelCase names as in the proto's JSON mapping, but
// 64-bit integers stay numbers and every field is printed, so `jq .schedulerEnforcing` sees
// `false` rather than nothing; bytes fields (names from the host) as their text.
#pragma once

#include <google/protobuf/message.h>
#include <nlohmann/json.hpp>

namespace c2c::api {

nlohmann::json proto_to_json(const google::protobuf::Message& m);

}  // namespace c2c::api
