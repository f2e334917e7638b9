// The Claim2Core gRPC service (spec/claim2core.proto). Unary RPCs are raw callback methods: the
// daemon parses the bytes itself, so a request that is not a valid message, or is larger than
// max_message_bytes, is INVALID_ARGUMENT naming "request" (not gRPC's generic INTERNAL), and no
// handler thread blocks: the engine finishes the call from its loop. Watch is a server stream
// (split-streamed: it reads and checks its own request).
#pragma once

#include <atomic>
#include <cstdint>

#include "claim2core.grpc.pb.h"
#include "daemon/loop/engine.hpp"

namespace c2c::daemon {

namespace pb = ::claim2core::v1;

using RawService = pb::Claim2Core::WithRawCallbackMethod_UpsertPolicy<
    pb::Claim2Core::WithRawCallbackMethod_DeletePolicy<pb::Claim2Core::WithRawCallbackMethod_UpsertClaimBinding<
        pb::Claim2Core::WithRawCallbackMethod_DeleteClaimBinding<pb::Claim2Core::WithRawCallbackMethod_Preview<
            pb::Claim2Core::WithRawCallbackMethod_ListIntents<pb::Claim2Core::WithRawCallbackMethod_Explain<
                pb::Claim2Core::WithRawCallbackMethod_Status<pb::Claim2Core::WithRawCallbackMethod_ListTasks<
                    pb::Claim2Core::WithRawCallbackMethod_ListPolicies<
                        pb::Claim2Core::WithRawCallbackMethod_ListBindings<
                            pb::Claim2Core::WithRawCallbackMethod_SetNodeLabels<
                                pb::Claim2Core::WithSplitStreamingMethod_Watch<
                                    pb::Claim2Core::WithRawCallbackMethod_RegisterTaskRole<
                                        pb::Claim2Core::WithRawCallbackMethod_ListDecisions<pb::Claim2Core::Service>>>>>>>>>>>>>>>;

class Service final : public RawService {
 public:
  Service(Engine& engine, Metrics& metrics, uint32_t max_message_bytes)
      : engine_(engine), metrics_(metrics), max_bytes_(max_message_bytes) {}
  void stop_watches() { stopping_ = true; }

  using Ctx = grpc::CallbackServerContext;
  using Buf = grpc::ByteBuffer;
  grpc::ServerUnaryReactor* UpsertPolicy(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* DeletePolicy(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* UpsertClaimBinding(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* DeleteClaimBinding(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* Preview(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* ListIntents(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* Explain(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* Status(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* ListTasks(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* ListPolicies(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* ListBindings(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* RegisterTaskRole(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* SetNodeLabels(Ctx* c, const Buf* in, Buf* out) override;
  grpc::ServerUnaryReactor* ListDecisions(Ctx* c, const Buf* in, Buf* out) override;
  // Split-streamed, so the handler reads the request itself: a request that does not parse is
  // INVALID_ARGUMENT naming "request" (gRPC's own deserialization answered INTERNAL, no message).
  grpc::Status StreamedWatch(grpc::ServerContext* c, grpc::ServerSplitStreamer<pb::WatchRequest, pb::ChangeEvent>* s) override;

 private:
  Engine& engine_;
  Metrics& metrics_;
  uint32_t max_bytes_;
  std::atomic<bool> stopping_{false};
};

}  // namespace c2c::daemon
