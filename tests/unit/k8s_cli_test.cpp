// `k8s bindings` as the claim2core CLI will run it (add_cli on a CLI11 app).
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include "k8s/cli.hpp"
#include "k8s_fixture_path.hpp"
#include <nlohmann/json.hpp>
#include "source_dir.hpp"

namespace c2c::k8s {
namespace {

std::string run(std::vector<std::string> args) {
  CLI::App app{"test"};
  add_cli(app);
  std::vector<char*> argv = {const_cast<char*>("claim2core")};
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream out;
  std::streambuf* old = std::cout.rdbuf(out.rdbuf());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return out.str();
}

TEST(K8sCli, BindingsJsonForTheTutorialAndCpuClaims) {
  C2C_REQUIRE_FIXTURES(dir);
  std::string out = run({"k8s", "bindings", "-f", (dir / "resourceclaim-v1-allocated-reserved-k8s-tutorial.yaml").string(),
                         "-f", (dir / "resourceclaim-v1-allocated-consumedcapacity-opaque-cpuset-dra-driver-cpu.yaml").string(),
                         "-f", (dir / "resourceslice-v1-nodename-dra-example-driver-gpu-list.yaml").string(),
                         "--node", "kind-worker", "-o", "json"});
  nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_EQ(j["bindings"].size(), 2u) << out;
  const auto& cpu = j["bindings"][0];
  EXPECT_EQ(cpu["claimUID"], "claim-uid-123456");
  EXPECT_EQ(cpu["cpus"], "2-5");
  EXPECT_EQ(cpu["nodeName"], "kind-worker");  // no nodeSelector: usable on the node asked for
  const auto& gpu = j["bindings"][1];
  EXPECT_EQ(gpu["claimUID"], "d3e48dbf-40da-47c3-a7b9-f7d54d1051c3");
  EXPECT_EQ(gpu["podUID"], "c4dadf20-392a-474d-a47b-ab82080c8bd7");
  EXPECT_EQ(gpu["device"], "gpu-0");
  EXPECT_TRUE(gpu["cpus"].is_null());
  EXPECT_TRUE(j["refused"].empty());
}

TEST(K8sCli, BindingsRefuseTheYamlCppHangInputInsteadOfHanging) {
  // fuzz/findings/yaml-cpp-loadall-hang.yaml never returns from yaml-cpp 0.7's LoadAll; `preview -f`
  // refused it through the bounded parser while `k8s bindings -f` hung (issue #12).
  const std::string hang = c2c::test::source_dir() + "/fuzz/findings/yaml-cpp-loadall-hang.yaml";
  std::string out = run({"k8s", "bindings", "-f", hang, "--node", "kind-worker", "-o", "json"});
  nlohmann::json j = nlohmann::json::parse(out);
  ASSERT_EQ(j["refused"].size(), 1u) << out;
  EXPECT_TRUE(j["bindings"].empty());
}

TEST(K8sCli, TableAndBadArguments) {
  C2C_REQUIRE_FIXTURES(dir);
  std::string out = run({"k8s", "bindings", "-f", (dir / "resourceclaim-v1-allocated-reserved-k8s-tutorial.yaml").string()});
  EXPECT_NE(out.find("dra-tutorial/some-gpu  pod0  kind-worker  some-gpu  gpu.example.com/kind-worker/gpu-0"),
            std::string::npos)
      << out;
  EXPECT_THROW(run({"k8s", "bindings", "-f", "/nonexistent/file.yaml"}), CLI::ValidationError);
  EXPECT_THROW(run({"k8s", "bindings", "-f", dir.string(), "-o", "xml"}), CLI::ValidationError);
}

}  // namespace
}  // namespace c2c::k8s
