#include "api/proto_json.hpp"

#include <google/protobuf/descriptor.h>

#include "core/names.hpp"

namespace c2c::api {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using nlohmann::json;

namespace {

json scalar_field(const Message& m, const Reflection& r, const FieldDescriptor* f, int index) {
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return rep ? r.GetRepeatedInt32(m, f, index) : r.GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64: return rep ? r.GetRepeatedInt64(m, f, index) : r.GetInt64(m, f);
    case FieldDescriptor::CPPTYPE_UINT32: return rep ? r.GetRepeatedUInt32(m, f, index) : r.GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT64: return rep ? r.GetRepeatedUInt64(m, f, index) : r.GetUInt64(m, f);
    case FieldDescriptor::CPPTYPE_DOUBLE: return rep ? r.GetRepeatedDouble(m, f, index) : r.GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT: return rep ? r.GetRepeatedFloat(m, f, index) : r.GetFloat(m, f);
    case FieldDescriptor::CPPTYPE_BOOL: return rep ? r.GetRepeatedBool(m, f, index) : r.GetBool(m, f);
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string s = rep ? r.GetRepeatedString(m, f, index) : r.GetString(m, f);
      // The API's bytes fields are names from the host (comm, process title, cgroup path): printed
      // as their text, U+FFFD for what is not UTF-8 (core/names.hpp), not as base64.
      if (f->type() == FieldDescriptor::TYPE_BYTES) return name_text(s);
      return s;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const auto* v = rep ? r.GetRepeatedEnum(m, f, index) : r.GetEnum(m, f);
      return v->name();
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return proto_to_json(rep ? r.GetRepeatedMessage(m, f, index) : r.GetMessage(m, f));
  }
  return nullptr;
}

// Map entries are messages with fields "key" and "value"; JSON object keys are strings.
std::string map_key(const Message& entry) {
  json k = proto_to_json(entry)["key"];
  return k.is_string() ? k.get<std::string>() : k.dump();
}

}  // namespace

json proto_to_json(const Message& m) {
  json out = json::object();
  const auto* d = m.GetDescriptor();
  const auto* r = m.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    // A oneof prints only its set member, so the reader can tell which kind it is.
    if (f->containing_oneof() && !r->HasField(m, f)) continue;
    const std::string& name = f->json_name();
    if (f->is_map()) {
      json obj = json::object();
      for (int k = 0; k < r->FieldSize(m, f); ++k) {
        const Message& entry = r->GetRepeatedMessage(m, f, k);
        obj[map_key(entry)] = proto_to_json(entry)["value"];
      }
      out[name] = std::move(obj);
    } else if (f->is_repeated()) {
      json arr = json::array();
      for (int k = 0; k < r->FieldSize(m, f); ++k) arr.push_back(scalar_field(m, *r, f, k));
      out[name] = std::move(arr);
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !r->HasField(m, f)) {
      out[name] = nullptr;  // unset submessage (e.g. no actual entry in the kernel map)
    } else {
      out[name] = scalar_field(m, *r, f, -1);
    }
  }
  return out;
}

}  // namespace c2c::api
