#include "rest/rest_metrics.hpp"

#include <prometheus/text_serializer.h>

#include <sstream>

#include "rest/request_decoder.hpp"

namespace c2c::rest {

RestMetrics::RestMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      refusals_(&prometheus::BuildCounter()
                     .Name("claim2core_rest_refusals_total")
                     .Help("Requests and connections claim2core-rest refused before calling claim2cored, by reason")
                     .Register(*registry_)),
      connections_(prometheus::BuildGauge()
                       .Name("claim2core_rest_connections")
                       .Help("Connections claim2core-rest is serving now")
                       .Register(*registry_)
                       .Add({})),
      limits_(&prometheus::BuildGauge()
                   .Name("claim2core_rest_limit")
                   .Help("claim2core-rest's configured limits (its command-line flags)")
                   .Register(*registry_)) {
  for (const auto& r : refusal_reasons()) refusals_->Add({{"reason", r}});
}

void RestMetrics::refused(const std::string& reason) { refusals_->Add({{"reason", reason}}).Increment(); }

std::string RestMetrics::text() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, registry_->Collect());
  return out.str();
}

}  // namespace c2c::rest
