#include "route/replica_answer.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(ReplicaAnswer, StatusesAndBodies) {
  for (int ok : {200, 204, 401, 404, 500, 599}) EXPECT_TRUE(ValidReplicaStatus(ok)) << ok;
  for (int bad : {0, 42, 99, 100, 101, 199, 600, 999}) EXPECT_FALSE(ValidReplicaStatus(bad)) << bad;
  EXPECT_TRUE(IsJsonText(R"({"a":[1,2,{"b":null}]})"));
  EXPECT_FALSE(IsJsonText("<html>hi</html>"));
  EXPECT_FALSE(IsJsonText(R"({"a":1} trailing)"));
  EXPECT_FALSE(IsJsonText(""));
  const ApiError e = BadGateway("x");
  EXPECT_EQ(e.http_status, 502);
  EXPECT_EQ(e.code, "bad_gateway");
}

TEST(ReplicaAnswer, FindsTheResponseId) {
  EXPECT_EQ(TopLevelId(R"({"id":"resp_1","output":[{"id":"msg_2"}]})"), "resp_1");
  EXPECT_EQ(TopLevelId(R"({"output":[{"id":"msg_2"}],"meta":{"id":"x"},"id":"resp_3"})"), "resp_3");
  EXPECT_EQ(TopLevelId(R"({"id":7})"), "");
  EXPECT_EQ(TopLevelId("not json"), "");
  const std::string sse =
      "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_9\"}}\n\n"
      "event: response.in_progress\ndata: {\"type\":\"response.in_progress\"}\n\n";
  EXPECT_EQ(CreatedResponseId(sse), "resp_9");
  EXPECT_EQ(CreatedResponseId("data: {\"type\":\"response.output_text.delta\"}\n\n"), "");
}

}  // namespace
}  // namespace pg
