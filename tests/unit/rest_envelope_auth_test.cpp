// Envelopes, status codes and auth of the REST gateway (src/rest/envelope.*, auth.*).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "rest/auth.hpp"

namespace c2c::rest {
namespace {

TEST(RestEnvelope, SuccessAndErrorShapes) {
  auto t = std::chrono::system_clock::from_time_t(1796112366);  // 2026-12-01T08:06:06Z
  Reply r = ok(json{{"x", 1}}, t);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body["success"], true);
  EXPECT_EQ(r.body["data"]["x"], 1);
  EXPECT_EQ(r.body["timestamp"], "2026-12-01T08:06:06Z");
  EXPECT_FALSE(ok(std::nullopt, t).body.contains("data"));  // "data" omitted when nil, as the original
  Reply e = bad_body("priority", "must be an integer");
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.body["success"], false);
  EXPECT_EQ(e.body["error"], "Invalid request body: priority: must be an integer");
  EXPECT_EQ(e.body["field"], "priority");
}

TEST(RestEnvelope, DaemonStatusCodes) {
  EXPECT_EQ(http_status_of(grpc::StatusCode::INVALID_ARGUMENT), 400);
  EXPECT_EQ(http_status_of(grpc::StatusCode::NOT_FOUND), 404);
  EXPECT_EQ(http_status_of(grpc::StatusCode::UNAVAILABLE), 503);
  EXPECT_EQ(http_status_of(grpc::StatusCode::DEADLINE_EXCEEDED), 503);
  EXPECT_EQ(http_status_of(grpc::StatusCode::PERMISSION_DENIED), 502);
  EXPECT_EQ(http_status_of(grpc::StatusCode::INTERNAL), 500);
  Reply r = from_rpc(client::CallError{grpc::StatusCode::UNAVAILABLE, "UNAVAILABLE", "connect failed"}, "Status");
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body["error"].get<std::string>().find("claim2cored unavailable"), std::string::npos);
}

const char* kFile =
    "# comment\n"
    "admin-token-0123456789 alice *\n"
    "\n"
    "reader-token-012345678 alice node_scheduling_policy.read,node_scheduling_intent.read  # trailing\n";

TEST(RestAuth, TokenFileParses) {
  TokenTable t = parse_token_file(kFile);
  ASSERT_EQ(t.tokens.size(), 2u);
  EXPECT_EQ(t.tokens[0].subject, "alice");
  EXPECT_EQ(t.tokens[0].permissions.size(), all_permissions().size());
  EXPECT_EQ(t.tokens[1].permissions, (std::set<std::string>{kPermPolicyRead, kPermIntentRead}));
}

TEST(RestAuth, BadTokenFilesAreRefusedWithTheLine) {
  auto refused = [](const std::string& text) {
    try {
      parse_token_file(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refused("short alice *\n").rfind("line 1: token shorter", 0), 0u);
  EXPECT_EQ(refused("\nadmin-token-0123456789 Alice *\n").rfind("line 2: subject", 0), 0u);
  EXPECT_NE(refused("admin-token-0123456789 alice node_scheduling_policy.write\n").find("unknown permission"), std::string::npos);
  EXPECT_NE(refused("admin-token-0123456789 alice\n").find("expected"), std::string::npos);
  EXPECT_NE(refused("admin-token-0123456789 alice * x\n").find("unexpected 'x'"), std::string::npos);
  EXPECT_NE(refused("admin-token-0123456789 a *\nadmin-token-0123456789 b *\n").find("given twice"), std::string::npos);
}

TEST(RestAuth, TokenFileMustBeRootOwnedAndPrivate) {
  struct stat st{};
  st.st_mode = S_IFREG | 0600;
  st.st_uid = 0;
  EXPECT_FALSE(token_file_problem(st));
  st.st_mode = S_IFREG | 0640;
  EXPECT_NE(token_file_problem(st)->find("group or others (mode 0640"), std::string::npos);
  st.st_mode = S_IFREG | 0604;
  EXPECT_TRUE(token_file_problem(st));
  st.st_mode = S_IFREG | 0600;
  st.st_uid = 1000;
  EXPECT_NE(token_file_problem(st)->find("not owned by root"), std::string::npos);
  st.st_uid = 0;
  st.st_mode = S_IFDIR | 0700;
  EXPECT_TRUE(token_file_problem(st));
}

// Issue 42: a FIFO given as the token file hung the start (open(2) for reading waits for a writer).
// It is refused at once, naming the flag. Should the open block (the old code), the test opens the
// FIFO for writing itself so that the loader returns, and fails.
TEST(RestAuth, FifoTokenFileIsRefusedWithoutBlocking) {
  char dir[] = "/tmp/c2c-rest-fifo-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/tokens";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto load = std::async(std::launch::async, [&] {
    try {
      load_token_file(fifo);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  });
  if (load.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets the blocked open return
    load.wait();
    if (w >= 0) ::close(w);
    ::unlink(fifo.c_str());
    ::rmdir(dir);
    FAIL() << "load_token_file blocked on a FIFO for 5 s";
  }
  std::string err = load.get();
  ::unlink(fifo.c_str());
  ::rmdir(dir);
  EXPECT_NE(err.find("FIFO"), std::string::npos) << err;
  EXPECT_NE(err.find("--token-file"), std::string::npos) << err;
}

TEST(RestAuth, RefusalsUseTheOriginalMessages) {
  TokenTable t = parse_token_file(kFile);
  auto message = [&](const std::string* h, const char* perm) {
    auto r = authorize(t, h, perm);
    if (auto* p = std::get_if<Principal>(&r)) return "ok " + p->subject;
    const Reply& rep = std::get<Reply>(r);
    return std::to_string(rep.status) + " " + rep.body["error"].get<std::string>();
  };
  std::string basic = "Basic YWxpY2U6eA==", bearer_only = "Bearer ", wrong = "Bearer admin-token-0123456780",
              admin = "Bearer admin-token-0123456789", reader = "Bearer reader-token-012345678",
              prefix = "Bearer admin-token-012345678";
  EXPECT_EQ(message(nullptr, kPermPolicyRead), "401 Missing Authorization header");
  EXPECT_EQ(message(&basic, kPermPolicyRead), "401 Invalid Authorization header format");
  EXPECT_EQ(message(&bearer_only, kPermPolicyRead), "401 Invalid Authorization header format");
  EXPECT_EQ(message(&wrong, kPermPolicyRead), "401 invalid or expired token");
  EXPECT_EQ(message(&prefix, kPermPolicyRead), "401 invalid or expired token");  // a prefix is not the token
  EXPECT_EQ(message(&reader, kPermPolicyCreate), "403 permission denied");
  EXPECT_EQ(message(&reader, kPermIntentRead), "ok alice");
  EXPECT_EQ(message(&admin, kPermIntentDelete), "ok alice");
}

TEST(RestAuth, BeyondLoopbackNeedsTls) {
  EXPECT_TRUE(is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(is_loopback_host("127.1.2.3"));
  EXPECT_TRUE(is_loopback_host("::1"));
  EXPECT_TRUE(is_loopback_host("localhost"));
  EXPECT_FALSE(is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(is_loopback_host("::"));
  EXPECT_FALSE(is_loopback_host("10.0.0.1"));
  EXPECT_FALSE(bind_problem("127.0.0.1", false));
  EXPECT_NE(bind_problem("0.0.0.0", false)->find("TLS is required"), std::string::npos);
  EXPECT_FALSE(bind_problem("0.0.0.0", true));
}

}  // namespace
}  // namespace c2c::rest
