#include "k8s/cluster_ack.hpp"

#include <thread>

#include "k8s/http_client.hpp"
#include "k8s/list_watch.hpp"
#include "k8s/policy_status.hpp"
#include "k8s/policy_watch.hpp"

namespace c2c::k8s {

using nlohmann::json;

ClusterAck acknowledge_in_cluster(const KubeConfig& cfg, const c2c::AnyPolicy& previewed, int max_attempts) {
  const bool dra = std::holds_alternative<DraExecutionPolicy>(previewed);
  const PolicyKind kind = dra ? PolicyKind::Dra : PolicyKind::Node;
  const std::string name = std::visit([](const auto& p) { return p.name; }, previewed);
  const std::string ref = std::string(policy_kind_name(kind)) + "/" + name;
  ClusterAck out;
  if (!dra) {
    out.message = ref + ": node policies need no preview; nothing to acknowledge";
    return out;
  }
  HttpClient http(cfg);
  const std::string path = policy_collection_path(kind) + "/" + url_encode(name);
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    HttpResult r = http.get(path, 30);
    if (r.error.empty() && r.status == 404) {
      out.message = ref + " is not in the cluster (kubectl apply -f it first)";
      return out;
    }
    json obj = r.ok() ? json::parse(r.body, nullptr, false) : json();
    if (!obj.is_object()) {
      out.message = ref + ": reading it from " + cfg.server + " failed: " +
                    describe_failure(r);
      return out;
    }
    std::string err;
    auto cluster = decode_policy_object(kind, obj, &err);
    if (!cluster) {
      out.message = "the cluster's " + err;
      return out;
    }
    const int64_t generation = std::visit([](const auto& p) { return p.generation; }, *cluster);
    c2c::AnyPolicy file = previewed;
    const int64_t file_generation = std::visit([](const auto& p) { return p.generation; }, file);
    if (file_generation != 0 && file_generation != generation) {
      out.message = ref + ": the manifest names metadata.generation " + std::to_string(file_generation) +
                    " but the cluster's object is at generation " + std::to_string(generation) + "; nothing acknowledged";
      return out;
    }
    std::visit([&](auto& p) { p.generation = generation; }, file);
    if (!(file == *cluster)) {
      out.message = "the cluster's " + ref + " (generation " + std::to_string(generation) +
                    ") differs from the previewed manifest: preview what is in the cluster "
                    "(kubectl get " + policy_plural(kind) + " " + name + " -o yaml); nothing acknowledged";
      return out;
    }
    out.generation = generation;
    if (acknowledged_generation(obj) == generation) {
      out.ok = true;
      out.message = ref + ": generation " + std::to_string(generation) + " was already acknowledged in the cluster";
      return out;
    }
    json patch = {{"metadata",
                   {{"resourceVersion", object_resource_version(obj)},
                    {"annotations", {{kAckAnnotation, std::to_string(generation)}}}}}};
    r = http.patch(path, patch.dump(), "application/merge-patch+json");
    if (r.error.empty() && r.status == 200) {
      out.ok = true;
      out.message = ref + ": generation " + std::to_string(generation) + " acknowledged in the cluster (annotation " +
                    kAckAnnotation + "); every node's feed passes it to its daemon";
      return out;
    }
    if (!(r.error.empty() && r.status == 409)) {
      out.message = ref + ": writing the annotation failed: " + describe_failure(r);
      return out;
    }
    // Changed since it was read (maybe its spec): read and compare again.
    std::this_thread::sleep_for(std::chrono::milliseconds(50 << attempt));
  }
  out.message = ref + ": the object kept changing (409 Conflict " + std::to_string(max_attempts) +
                " times); nothing acknowledged";
  return out;
}

}  // namespace c2c::k8s
