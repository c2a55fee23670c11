// The provisioning control API (`dsekp keys serve`, edge/control_api/control_server.hpp) as a
// fleet tool uses it: the built binary on a socket in a test directory, an HTTP client, and the
// registry opened with the library to check what each call did. Also what it refuses: requests
// without the token (or with it in the URL), bad, chunked or compressed bodies, a weak or exposed
// token file, a replaced registry; that its socket is the owner's and group's; that its log holds
// no secret and no line a request wrote.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "control_api_process.hpp"
#include "edge/registry/device_registry.hpp"
#include "edge/registry/text_encoding.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/child_process.hpp"
#include "tests/support/temp_dir.hpp"

namespace dsekp::edge {
namespace {

using nlohmann::json;

class ControlApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = test::run_command(
        {::dsekp::test::cli_path(), "keys", "add", "esp32-01", "--db", db_}, dir_.path().string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(api_.start(dir_, ::dsekp::test::cli_path(), db_)) << api_.stderr_text();
  }

  std::unique_ptr<DeviceRegistry> registry() {
    std::unique_ptr<DeviceRegistry> r;
    EXPECT_TRUE(DeviceRegistry::open(db_, OpenMode::existing_only, r).ok());
    return r;
  }
  static json body(const httplib::Result& r) {
    return r ? json::parse(r->body, nullptr, false) : json();
  }

  test::TempDir dir_;
  std::string db_ = dir_.file("registry.db");
  test::ControlApiProcess api_;
};

TEST_F(ControlApiTest, AFleetToolAddsListsShowsRotatesAndRemovesDevices) {
  auto c = api_.client();
  auto r = c.Post("/v1/devices", R"({"dev_id":"esp32-02","broker":"192.168.1.10:8883"})",
                  "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 201) << r->body;
  EXPECT_EQ(r->get_header_value("Cache-Control"), "no-store");
  json added = body(r);
  DeviceMaterial stored;
  ASSERT_TRUE(registry()->material("esp32-02", stored).ok());
  EXPECT_EQ(added["dev_secret_hex"], to_hex(stored.credentials.dev_secret.view()));
  EXPECT_EQ(added["broker"]["host"], "192.168.1.10");
  EXPECT_EQ(added["broker"]["password"], stored.broker_password);
  EXPECT_EQ(added["topics"]["data"], "dsekp/data/esp32-02");
  EXPECT_EQ(added["broker_update"]["update"], "files");

  r = c.Get("/v1/devices");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  const json list = body(r);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[1]["dev_id"], "esp32-02");
  // No secret's value (the material's *_hex fields); "secret_erased" says only when.
  EXPECT_EQ(r->body.find("_hex"), std::string::npos) << "the list holds no secret";
  EXPECT_EQ(r->body.find("dev_secret"), std::string::npos) << "the list holds no secret";

  r = c.Get("/v1/devices/esp32-02");
  ASSERT_TRUE(r);
  EXPECT_EQ(body(r)["generation"], added["generation"]);
  EXPECT_FALSE(body(r).contains("dev_secret_hex"));

  r = c.Post("/v1/devices/esp32-02/material", "", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(body(r)["dev_secret_hex"], added["dev_secret_hex"]);

  r = c.Post("/v1/devices/esp32-02/rotate", "", "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_NE(body(r)["dev_secret_hex"], added["dev_secret_hex"]);
  ASSERT_TRUE(registry()->material("esp32-02", stored).ok());
  EXPECT_EQ(body(r)["dev_secret_hex"], to_hex(stored.credentials.dev_secret.view()));

  r = c.Delete("/v1/devices/esp32-02");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body(r)["removed"], true);
  DeviceInfo gone;
  EXPECT_EQ(registry()->info("esp32-02", gone).code(), RegistryErrc::not_found);

  // Its log names each request, never what was in it.
  const std::string log = api_.log_with("DELETE /v1/devices/esp32-02 200");
  EXPECT_NE(log.find("POST /v1/devices 201"), std::string::npos) << log;
  EXPECT_NE(log.find("DELETE /v1/devices/esp32-02 200"), std::string::npos) << log;
  for (const std::string secret :
       {added["dev_secret_hex"].get<std::string>(), added["broker"]["password"].get<std::string>(),
        std::string(test::ControlApiProcess::kToken)})
    EXPECT_EQ(log.find(secret), std::string::npos) << log;
}

TEST_F(ControlApiTest, OnlyTheBearerTokenInTheHeaderLetsARequestIn) {
  const auto status = [](const httplib::Result& r) { return r ? r->status : -1; };
  auto anonymous = api_.anonymous();
  EXPECT_EQ(status(anonymous.Get("/v1/devices")), 401);
  // In one write: the server answers before reading the body and closes, and a client still
  // writing it would get EPIPE.
  const std::string add = api_.raw_exchange(
      "POST /v1/devices HTTP/1.1\r\nHost: x\r\nContent-Length: 15\r\n\r\n{\"dev_id\":\"x1\"}");
  EXPECT_EQ(add.rfind("HTTP/1.1 401", 0), 0u) << add;
  EXPECT_EQ(status(anonymous.Delete("/v1/devices/esp32-01")), 401);
  EXPECT_EQ(
      status(anonymous.Get(std::string("/v1/devices?token=") + test::ControlApiProcess::kToken)),
      401)
      << "a token in the URL is not looked at";
  auto wrong = api_.anonymous();
  wrong.set_bearer_token_auth(std::string(test::ControlApiProcess::kToken) + "x");
  EXPECT_EQ(status(wrong.Get("/v1/devices")), 401);
  wrong.set_bearer_token_auth(std::string(test::ControlApiProcess::kToken).substr(0, 31));
  EXPECT_EQ(status(wrong.Delete("/v1/devices/esp32-01")), 401);
  auto basic = api_.anonymous();
  basic.set_basic_auth("admin", test::ControlApiProcess::kToken);
  EXPECT_EQ(status(basic.Get("/v1/devices")), 401);
  // Without the token no body is read: the answer comes before the body does.
  const std::string refused = api_.raw_exchange(
      "POST /v1/devices HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  EXPECT_EQ(refused.rfind("HTTP/1.1 401", 0), 0u) << refused;
  DeviceInfo info;
  EXPECT_TRUE(registry()->info("esp32-01", info).ok()) << "nothing was removed";
  std::vector<DeviceInfo> all;
  ASSERT_TRUE(registry()->list(all).ok());
  EXPECT_EQ(all.size(), 1u) << "nothing was added";
}

TEST_F(ControlApiTest, BadRequestsAreRefusedByName) {
  auto c = api_.client();
  const auto post = [&](const std::string& text) {
    auto r = c.Post("/v1/devices", text, "application/json");
    return std::make_pair(r ? r->status : -1, body(r).value("error", std::string()));
  };
  EXPECT_EQ(post(R"({"dev_id":"esp32-01"})"), std::make_pair(409, std::string("already_exists")));
  EXPECT_EQ(post(R"({"dev_id":"bad id!"})"), std::make_pair(400, std::string("invalid_dev_id")));
  EXPECT_EQ(post("not json"), std::make_pair(400, std::string("bad_request")));
  EXPECT_EQ(post(R"({"dev_id":"x1","secret":"mine"})"),
            std::make_pair(400, std::string("bad_request")));
  EXPECT_EQ(post(R"({"dev_id":"x1","broker":"nohost"})"),
            std::make_pair(400, std::string("bad_request")));
  EXPECT_EQ(post(R"({"dev_id":"x1","broker":1883})"),
            std::make_pair(400, std::string("bad_request")));
  // A body only of a declared length, at most 16 KiB, uncompressed, refused before it is read
  // (httplib would read a chunked or compressed one past the limit): each answer comes though
  // the body never does.
  const std::string auth =
      std::string("Authorization: Bearer ") + test::ControlApiProcess::kToken + "\r\n";
  const auto refused = [&](const std::string& header) {
    return api_.raw_exchange("POST /v1/devices HTTP/1.1\r\nHost: x\r\n" + auth + header +
                             "\r\n\r\n");
  };
  std::string answer = refused("Content-Length: 20000");
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer;
  answer = refused("Transfer-Encoding: chunked");
  EXPECT_EQ(answer.rfind("HTTP/1.1 411", 0), 0u) << answer;
  EXPECT_NE(answer.find("length_required"), std::string::npos) << answer;
  answer = refused("Content-Encoding: gzip\r\nContent-Length: 100");
  EXPECT_EQ(answer.rfind("HTTP/1.1 415", 0), 0u) << answer;
  // A request cannot write a log line of its own.
  (void)c.Get("/v1/devices/x%0aGET%20/forged%20200");
  const std::string log = api_.log_with("x\\x0aGET /forged");
  EXPECT_NE(log.find("GET /v1/devices/x\\x0aGET /forged 200 404"), std::string::npos) << log;
  EXPECT_EQ(log.find("\nGET /forged"), std::string::npos) << log;
  auto r = c.Get("/v1/devices/nobody");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(body(r)["error"], "not_found");
  r = c.Post("/v1/devices/nobody/rotate", "", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  r = c.Get("/v1/elsewhere");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  std::vector<DeviceInfo> all;
  ASSERT_TRUE(registry()->list(all).ok());
  EXPECT_EQ(all.size(), 1u);
  // Still serving after all of it.
  r = c.Get("/v1/devices");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  // A clean stop on SIGTERM.
  api_.process().signal(SIGTERM);
  EXPECT_EQ(api_.process().wait_for(std::chrono::seconds(5)), std::optional<int>(0));
}

// Only the registry's owner and group may connect: the socket is 0660 from its creation.
TEST_F(ControlApiTest, TheSocketIsTheOwnersAndGroupsAndASecondServerIsRefused) {
  struct stat st {};
  ASSERT_EQ(::stat(api_.socket_path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  const auto r =
      test::run_command({::dsekp::test::cli_path(), "keys", "serve", "--db", db_, "--listen",
                         api_.socket_path(), "--token-file", dir_.file("api-token")},
                        dir_.path().string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("in use by another server"), std::string::npos) << r.err;
  // Stopped: the socket is gone.
  api_.process().signal(SIGTERM);
  EXPECT_EQ(api_.process().wait_for(std::chrono::seconds(5)), std::optional<int>(0));
  EXPECT_NE(::stat(api_.socket_path().c_str(), &st), 0);
}

// A registry deleted or restored from a copy under the running server: refused, never written to
// a file nobody will read.
TEST_F(ControlApiTest, ARegistryReplacedUnderTheServerIsRefused) {
  const std::string copy = dir_.file("copy.db");
  std::filesystem::copy_file(db_, copy);
  std::filesystem::rename(copy, db_);
  auto r = api_.client().Post("/v1/devices", R"({"dev_id":"lost-one"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(body(r)["error"], "registry_replaced");
  EXPECT_EQ(body(r).count("dev_secret_hex"), 0u);
}

TEST(ControlApiStart, WithAWeakOrExposedTokenOrOnAnotherFileItDoesNotStart) {
  test::TempDir dir;
  const std::string db = dir.file("registry.db");
  ASSERT_EQ(test::run_command({::dsekp::test::cli_path(), "keys", "add", "d1", "--db", db},
                              dir.path().string())
                .exit_code,
            0);
  const std::string token = dir.file("token");
  std::ofstream(token) << test::ControlApiProcess::kToken << "\n";
  ASSERT_EQ(::chmod(token.c_str(), 0600), 0);
  const auto serve = [&](const std::string& listen, const std::string& token_file) {
    return test::run_command({::dsekp::test::cli_path(), "keys", "serve", "--db", db, "--listen",
                              listen, "--token-file", token_file},
                             dir.path().string());
  };
  const std::string weak = dir.file("weak");
  std::ofstream(weak) << "short\n";
  ASSERT_EQ(::chmod(weak.c_str(), 0600), 0);
  auto r = serve(dir.file("api.sock"), weak);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("at least 32 characters"), std::string::npos) << r.err;
  r = serve(db, token);  // the registry itself is not a socket
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("exists and is not a socket"), std::string::npos) << r.err;
  ASSERT_EQ(::chmod(token.c_str(), 0644), 0);
  r = serve(dir.file("api.sock"), token);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--token-file"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dsekp::edge
