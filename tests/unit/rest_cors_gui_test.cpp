// CORS allow-list and the --gui-dir folder (src/rest/cors_policy.*, gui_dir.*; issue 47).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "rest/cors_policy.hpp"
#include "rest/gui_dir.hpp"

namespace c2c::rest {
namespace {

std::string header_of(const HeaderList& h, const std::string& name) {
  for (const auto& [k, v] : h)
    if (k == name) return v;
  return "";
}

TEST(RestCors, OriginsMustBeExactOrigins) {
  EXPECT_FALSE(cors_origin_problem("http://gui.example:5173"));
  EXPECT_FALSE(cors_origin_problem("https://10.0.0.7"));
  EXPECT_FALSE(cors_origin_problem("http://[::1]:8080"));
  for (const char* bad : {"*", "http://gui.example/", "http://gui.example/app", "HTTP://gui.example", "gui.example",
                          "ftp://gui.example", "http://gui.example:99999", "http://Gui.example", ""}) {
    auto p = cors_origin_problem(bad);
    ASSERT_TRUE(p) << "accepted: '" << bad << "'";
    EXPECT_NE(p->find("--cors-origin"), std::string::npos) << *p;
  }
}

TEST(RestCors, PreflightOnlyForListedOrigins) {
  CorsPolicy p{{"http://gui.example:5173"}};
  std::string listed = "http://gui.example:5173", other = "http://evil.example", post = "POST", patch = "PATCH";
  auto yes = cors_preflight(p, &listed, &post);
  EXPECT_EQ(yes.reply.status, 204);
  EXPECT_EQ(header_of(yes.headers, "Access-Control-Allow-Origin"), listed);
  EXPECT_NE(header_of(yes.headers, "Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
  EXPECT_NE(header_of(yes.headers, "Access-Control-Allow-Methods").find("DELETE"), std::string::npos);
  auto no = cors_preflight(p, &other, &post);
  EXPECT_EQ(no.reply.status, 403);
  EXPECT_EQ(header_of(no.headers, "Access-Control-Allow-Origin"), "");
  EXPECT_EQ(no.reply.body["field"], "Origin");
  EXPECT_EQ(cors_preflight(p, nullptr, &post).reply.status, 403);
  EXPECT_EQ(cors_preflight(p, &listed, nullptr).reply.status, 403);
  auto m = cors_preflight(p, &listed, &patch);
  EXPECT_EQ(m.reply.status, 403);
  EXPECT_EQ(m.reply.body["field"], "Access-Control-Request-Method");
  // A listed origin's plain request gets the allow header; an unlisted one's none.
  EXPECT_EQ(header_of(cors_headers(p, &listed), "Access-Control-Allow-Origin"), listed);
  EXPECT_TRUE(cors_headers(p, &other).empty());
  EXPECT_TRUE(cors_headers(p, nullptr).empty());
  EXPECT_TRUE(cors_headers(CorsPolicy{}, &listed).empty());  // off by default
  EXPECT_FALSE(p.allows("http://gui.example:5173.evil.example"));
  EXPECT_FALSE(p.allows("http://gui.example"));
}

class RestGuiDir : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/c2c-gui-XXXXXX";
    root_ = mkdtemp(tmpl);
    dir_ = root_ / "dist";
    std::filesystem::create_directories(dir_ / "assets");
    std::ofstream(dir_ / "index.html") << "<html>gui</html>";
    std::ofstream(dir_ / "assets" / "app.js") << "let x = 1;";
    std::ofstream(root_ / "secret.txt") << "outside";
    std::filesystem::create_symlink("/etc/passwd", dir_ / "assets" / "pw");
    std::filesystem::create_symlink("../../secret.txt", dir_ / "assets" / "up");
    std::filesystem::create_symlink("app.js", dir_ / "assets" / "same.js");
    ASSERT_EQ(mkfifo((dir_ / "assets" / "fifo.js").c_str(), 0600), 0);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_, dir_;
};

TEST_F(RestGuiDir, ServesFilesAndTheSpaFallback) {
  GuiDir g(dir_);
  auto idx = std::get<GuiFile>(g.get("/"));
  EXPECT_EQ(idx.content, "<html>gui</html>");
  EXPECT_EQ(idx.content_type, "text/html; charset=utf-8");
  EXPECT_FALSE(idx.etag.empty());
  auto js = std::get<GuiFile>(g.get("/assets/app.js"));
  EXPECT_EQ(js.content, "let x = 1;");
  EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(std::get<GuiFile>(g.get("/assets/same.js")).content, "let x = 1;");  // a symlink inside
  EXPECT_EQ(std::get<GuiFile>(g.get("/node-policies")).content, "<html>gui</html>");  // the SPA's route
  EXPECT_EQ(std::get<Reply>(g.get("/missing.js")).status, 404);               // a missing asset
  EXPECT_EQ(std::get<Reply>(g.get("/assets/fifo.js")).status, 404);           // not waited on
}

TEST_F(RestGuiDir, TraversalIsRefused) {
  GuiDir g(dir_);
  for (const char* p : {"/../secret.txt", "/assets/../../secret.txt", "/..", "/assets/..", "/a\\..\\b"}) {
    auto r = g.get(p);
    ASSERT_TRUE(std::holds_alternative<Reply>(r)) << p;
    EXPECT_EQ(std::get<Reply>(r).status, 400) << p;
  }
  // Symlinks that leave the folder: refused by the kernel (RESOLVE_BENEATH), not served.
  for (const char* p : {"/assets/pw", "/assets/up"}) {
    auto r = g.get(p);
    ASSERT_TRUE(std::holds_alternative<Reply>(r)) << p;
    EXPECT_EQ(std::get<Reply>(r).status, 400) << p;
    EXPECT_EQ(std::get<Reply>(r).body["error"], "path traversal refused") << p;
  }
  EXPECT_FALSE(gui_path_problem("/assets/a..b.js"));  // ".." inside a name is a name
}

TEST_F(RestGuiDir, AFolderWithoutIndexIsRefusedAtStart) {
  EXPECT_THROW(GuiDir(root_ / "nope"), std::runtime_error);
  EXPECT_THROW(GuiDir(dir_ / "assets"), std::runtime_error);
}

}  // namespace
}  // namespace c2c::rest
