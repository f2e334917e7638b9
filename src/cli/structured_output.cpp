#include "cli/structured_output.hpp"

#include <google/protobuf/descriptor.h>
#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include "core/names.hpp"

namespace c2c::cli {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using nlohmann::json;

OutputFormat output_format_from_string(const std::string& s) {
  if (s == "table") return OutputFormat::Table;
  if (s == "json") return OutputFormat::Json;
  if (s == "yaml") return OutputFormat::Yaml;
  throw std::invalid_argument("output format must be table, json or yaml, got '" + s + "'");
}

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

bool looks_typed(const std::string& s) {
  if (s.empty()) return true;
  static const char* const kWords[] = {"true", "True", "TRUE", "false", "False", "FALSE", "null",
                                       "Null", "NULL", "~",    "yes",  "no",   "on",    "off"};
  for (const char* w : kWords)
    if (s == w) return true;
  char c = s.front();
  return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

void emit(YAML::Emitter& out, const json& j) {
  switch (j.type()) {
    case json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [k, v] : j.items()) {
        out << YAML::Key;
        if (looks_typed(k)) out << YAML::DoubleQuoted;
        out << k << YAML::Value;
        emit(out, v);
      }
      out << YAML::EndMap;
      break;
    case json::value_t::array:
      if (j.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        break;
      }
      out << YAML::BeginSeq;
      for (const auto& v : j) emit(out, v);
      out << YAML::EndSeq;
      break;
    case json::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      if (looks_typed(s)) out << YAML::DoubleQuoted;
      out << s;
      break;
    }
    case json::value_t::boolean: out << (j.get<bool>() ? "true" : "false"); break;
    case json::value_t::number_integer: out << j.get<int64_t>(); break;
    case json::value_t::number_unsigned: out << j.get<uint64_t>(); break;
    case json::value_t::number_float: out << j.get<double>(); break;
    case json::value_t::null:
    case json::value_t::discarded:
    case json::value_t::binary: out << YAML::Null; break;
  }
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

std::string json_to_yaml(const json& j) {
  YAML::Emitter out;
  out.SetIndent(2);
  emit(out, j);
  std::string s = out.c_str();
  if (s.empty() || s.back() != '\n') s += '\n';
  return s;
}

}  // namespace c2c::cli
