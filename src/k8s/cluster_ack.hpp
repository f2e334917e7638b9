// The cluster-wide preview acknowledgement, written by `claim2core preview --acknowledge
// --kubernetes`: the policy object in the cluster gets metadata.annotations
// claim2core.io/acknowledged-generation = its metadata.generation, once, and every node's feed
// passes it to its daemon (Preview with acknowledge, feed_sender.hpp). Only what was previewed is
// acknowledged: the cluster's spec must equal the manifest's, or nothing is written.
#pragma once

#include <cstdint>
#include <string>

#include "k8s/kube_config.hpp"
#include "codec/policy_codec.hpp"

namespace c2c::k8s {

struct ClusterAck {
  bool ok = false;
  int64_t generation = 0;  // the acknowledged metadata.generation
  std::string message;     // a sentence naming the object, for people
};

// GET the object named by `previewed`, compare, PATCH (merge patch of metadata.annotations with
// the resourceVersion read: a spec changed in between is a 409, re-read and compared again).
ClusterAck acknowledge_in_cluster(const KubeConfig& cfg, const c2c::AnyPolicy& previewed, int max_attempts = 5);

}  // namespace c2c::k8s
