// The typed node API (issue 44 item 3): one method per RPC of claim2cored, plain C++ requests
// (the core's model) and replies (api/replies.hpp), errors as a value. No protobuf here: the wire
// is converted once, in node_client.cpp (requests) and src/api/replies_proto.cpp (replies). Every
// front end (the CLI, claim2core-rest, the k8s feed) reaches the daemon through it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "api/replies.hpp"
#include "client/connection.hpp"

namespace grpc {
class Channel;
}

namespace c2c::client {

// A call that did not succeed: the gRPC status (its code's number and name, e.g. 3
// INVALID_ARGUMENT) and the daemon's message, or a reply the client could not read (code
// INTERNAL, the message naming the reply's field).
struct CallError {
  int code = 0;
  std::string code_name;
  std::string message;
  // The daemon refused the input (INVALID_ARGUMENT, OUT_OF_RANGE): the CLI's exit 2.
  bool invalid_input() const { return code == 3 || code == 11; }
  bool unavailable() const { return code == 14; }
  bool not_found() const { return code == 5; }
};

// A reply or the error, never both.
template <class T>
class Result {
 public:
  Result(T v) : v_(std::move(v)) {}  // NOLINT: a reply converts implicitly
  Result(CallError e) : v_(std::move(e)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  const T& value() const { return std::get<0>(v_); }
  T& value() { return std::get<0>(v_); }
  const T& operator*() const { return value(); }
  const T* operator->() const { return &value(); }
  const CallError& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, CallError> v_;
};

struct TaskFilter {
  std::string comm_regex;   // RE2 on the comm's text
  std::string title_regex;  // RE2 on the process title's text
  uint32_t tgid = 0;        // 0: any
  bool matched_only = false;
};

// The daemon's change stream (Watch). Read it from one thread; cancel() from any.
class ChangeStream {
 public:
  ~ChangeStream();
  ChangeStream(ChangeStream&&) noexcept;
  // Blocks until the daemon has subscribed the watch (so nothing after this is missed).
  void wait_subscribed();
  // The next change; false when the stream ended (then finish() says why).
  bool next(reply::Change& out);
  void cancel();
  // nullopt: ended cleanly (after cancel(): CANCELLED, which the caller that cancelled ignores).
  std::optional<CallError> finish();

 private:
  friend class NodeClient;
  struct Impl;
  explicit ChangeStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class NodeClient {
 public:
  // `timeout`: each unary call's deadline (the stream has none).
  NodeClient(std::shared_ptr<grpc::Channel> channel, std::chrono::milliseconds timeout);
  // The connection's channel (throws ConnectionError on a usage problem) and its timeout.
  explicit NodeClient(const ConnectionOptions& o);
  ~NodeClient();
  NodeClient(NodeClient&&) noexcept;

  // require_named_node: refuse the write, changing nothing, when a node policy's nodeNames leaves
  // this node out (the reply says node_selected false and names the node).
  Result<reply::Upsert> upsert_policy(const AnyPolicy& p, bool require_named_node = false) const;
  // generation 0: whatever generation is stored.
  Result<reply::Delete> delete_policy(PolicyKind kind, const std::string& name, int64_t generation = 0) const;
  Result<reply::Preview> preview(const AnyPolicy& p, bool acknowledge = false) const;
  Result<std::vector<reply::Intent>> list_intents(const std::string& policy = {},
                                                  std::optional<PolicyKind> kind = std::nullopt) const;
  Result<reply::Explain> explain(uint32_t tid) const;
  // The controllers' decisions the daemon keeps, oldest first, and every controller's level (issue
  // 46): policy "" any ("<Kind>/<name>" or a name), tid 0 any, limit 0 every one kept.
  Result<reply::Decisions> list_decisions(const std::string& policy = {}, uint32_t tid = 0, uint32_t limit = 0) const;
  Result<reply::Status> status() const;
  Result<std::vector<reply::Task>> list_tasks(const TaskFilter& f) const;
  Result<reply::Policies> list_policies() const;
  Result<reply::Bindings> list_bindings() const;
  // start 0: the daemon reads it from /proc; role "": unregister.
  Result<reply::Role> register_task_role(uint32_t tid, uint64_t start, const std::string& role) const;
  ChangeStream watch() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace c2c::client
