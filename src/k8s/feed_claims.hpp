// From the observer's binding state to the daemon's UpsertClaimBinding / DeleteClaimBinding
// requests, one per claim UID. Pure: no I/O, no threads; the feed's sender does the calls.
//
// Claim generation. The core refuses a changed claim whose generation did not increase and keeps a
// deallocated claim's generation as a tombstone (INV-3). A ResourceClaim's metadata.generation only
// moves with its spec, while allocation and reservedFor live in status, and what the daemon gets
// also depends on pods and slices. So the generation sent is the observer's revision (the highest
// resourceVersion seen, an etcd revision that grows with every write in the cluster) at the time
// the claim's request last changed, and never less than the previous one + 1. A restarted feed
// lists at a revision at least as high as anything it sent before, so it is never refused as older.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "claim2core.pb.h"
#include "k8s/observer.hpp"

namespace c2c::k8s {

namespace pb = ::claim2core::v1;

struct ClaimDelete {
  std::string claim_uid;
  int64_t generation = 0;
};

struct ClaimFeedChanges {
  std::vector<pb::UpsertClaimBindingRequest> upserts;  // one claim each, with its pods
  std::vector<ClaimDelete> deletes;                    // claims that lost every binding here
};

class ClaimFeedPlanner {
 public:
  // The changes since the previous call (the first call sends every claim).
  ClaimFeedChanges update(const BindingState& state);
  // The current request of every claim, for a full resend.
  std::map<std::string, pb::UpsertClaimBindingRequest> current() const;

 private:
  struct Sent {
    pb::UpsertClaimBindingRequest request;  // claim_generation as sent
    pb::UpsertClaimBindingRequest content;  // claim_generation 0: what a change is judged on
    int64_t generation = 0;
  };
  std::map<std::string, Sent> last_;
  std::map<std::string, int64_t> deleted_;  // generation of the last delete, so a re-allocation goes above it
};

// One binding in the wire form (cpus in kernel list format, empty when the driver says nothing).
pb::ClaimDeviceBinding binding_to_proto(const ClaimDeviceBinding& b, int64_t claim_generation);

}  // namespace c2c::k8s
