// Where the CLI connects: --socket, then $CLAIM2CORE_SOCKET, then the default; TCP only with mTLS.
#include <gtest/gtest.h>

#include <cstdlib>

#include "client/connection.hpp"
#include "source_dir.hpp"

namespace c2c::client {
namespace {

std::string refusal(const ConnectionOptions& o) {
  try {
    open_channel(o);
  } catch (const ConnectionError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(CliConnection, SocketFlagThenEnvironmentThenDefault) {
  ::unsetenv(kSocketEnv);
  ConnectionOptions o;
  EXPECT_EQ(target_of(o), "unix:/run/claim2core/claim2cored.sock");
  ::setenv(kSocketEnv, "/tmp/c2c-test.sock", 1);
  EXPECT_EQ(target_of(o), "unix:/tmp/c2c-test.sock");
  o.socket = "/run/other.sock";
  EXPECT_EQ(target_of(o), "unix:/run/other.sock");
  ::unsetenv(kSocketEnv);
}

TEST(CliConnection, TcpNeedsEveryTlsFile) {
  ConnectionOptions o;
  o.server = "node-1:7443";
  EXPECT_EQ(refusal(o), "--cacert: required with --server (TCP is mutual TLS only)");
  o.cacert = "/nonexistent/ca.pem";
  EXPECT_EQ(refusal(o), "--cacert: cannot read /nonexistent/ca.pem");
  o.cacert = c2c::test::source_dir() + "/README.md";
  EXPECT_NE(refusal(o).find("is not PEM"), std::string::npos);
}

TEST(CliConnection, ConflictingOrMalformedOptionsAreRefused) {
  ConnectionOptions o;
  o.server = "node-1";
  EXPECT_NE(refusal(o).find("--server: expected HOST:PORT"), std::string::npos);
  o.server = "node-1:7443";
  o.socket = "/run/x.sock";
  EXPECT_EQ(refusal(o), "--socket and --server: choose one");
  ConnectionOptions u;
  u.cert = "/tmp/c.pem";
  EXPECT_NE(refusal(u).find("only with --server"), std::string::npos);
  ConnectionOptions ok;
  ok.socket = "/run/x.sock";
  EXPECT_EQ(refusal(ok), "accepted");  // creating a channel does not connect yet
}

}  // namespace
}  // namespace c2c::client
