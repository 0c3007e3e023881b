// Test support (header-only, used by *_test.cc): an HttpServer on an
// ephemeral loopback port over a FakeInferenceService. The SSE and raw-TCP
// helpers are in testing/http_test_util.h (shared with the real-server tests).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/http_server.h"
#include "testing/fake_inference_service.h"
#include "testing/http_test_util.h"

namespace pg::testing {

struct TestServer {
  std::unique_ptr<FakeInferenceService> service;
  std::unique_ptr<HttpServer> server;
  int port = -1;

  httplib::Client Client(double timeout_s = 30) const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(static_cast<time_t>(timeout_s), 0);
    c.set_write_timeout(static_cast<time_t>(timeout_s), 0);
    return c;
  }
};

inline std::unique_ptr<TestServer> StartTestServer(FakeServiceOptions fake = {}, ServerOptions opts = {}) {
  auto t = std::make_unique<TestServer>();
  Result<std::unique_ptr<Tokenizer>> tok = FakeInferenceService::MakeTestTokenizer();
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  if (!tok.ok()) return nullptr;
  t->service = std::make_unique<FakeInferenceService>(std::move(tok).value(), std::move(fake));
  opts.host = "127.0.0.1";
  opts.port = 0;
  t->server = std::make_unique<HttpServer>(opts, t->service.get());
  Status st = t->server->Start();
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (!st.ok()) return nullptr;
  t->port = t->server->port();
  return t;
}

}  // namespace pg::testing
