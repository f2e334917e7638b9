#include "core/model.hpp"

#include "core/runtime_entry.hpp"

namespace c2c {

const char* to_string(ExecClass c) {
  switch (c) {
    case ExecClass::Unmatched: return "unmatched";
    case ExecClass::LatencyCritical: return "latency-critical";
    case ExecClass::CommunicationProgress: return "communication-progress";
    case ExecClass::Throughput: return "throughput";
    case ExecClass::Background: return "background";
    case ExecClass::Normal: return "normal";
  }
  return "unknown";
}

std::optional<ExecClass> exec_class_from_string(const std::string& s) {
  for (auto c : {ExecClass::LatencyCritical, ExecClass::CommunicationProgress, ExecClass::Throughput,
                 ExecClass::Background, ExecClass::Normal})
    if (s == to_string(c)) return c;
  return std::nullopt;
}

bool class_boosts(ExecClass c) {
  return c == ExecClass::LatencyCritical || c == ExecClass::CommunicationProgress;
}


const char* to_string(PolicyKind k) { return k == PolicyKind::Dra ? "DRAExecutionPolicy" : "NodeSchedulingPolicy"; }

PolicyKind kind_of(const AnyPolicy& p) {
  return std::holds_alternative<DraExecutionPolicy>(p) ? PolicyKind::Dra : PolicyKind::Node;
}
const std::string& name_of(const AnyPolicy& p) {
  return std::visit([](const auto& x) -> const std::string& { return x.name; }, p);
}
int64_t generation_of(const AnyPolicy& p) {
  return std::visit([](const auto& x) { return x.generation; }, p);
}

const char* to_string(Strategy s) { return s == Strategy::ExactTid ? "exact-tid" : "tgid"; }

const char* to_string(PlanOp::Kind k) {
  switch (k) {
    case PlanOp::Kind::Add: return "add";
    case PlanOp::Kind::Update: return "update";
    case PlanOp::Kind::Delete: return "delete";
  }
  return "unknown";
}

}  // namespace c2c
