#include "server/anthropic_tool_stream.h"

#include <gtest/gtest.h>

#include <vector>

namespace pg {
namespace {

// Pushes the pieces; returns what was released along the way.
std::string PushAll(ToolTextGate* gate, const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& p : pieces) out += gate->Push(p);
  return out;
}

TEST(ToolTextGate, PlainTextStreamsAndEndsExact) {
  ToolTextGate g;
  EXPECT_EQ(PushAll(&g, {"  Hel", "lo <b>wor", "ld</b> \n"}), "  Hello <b>world</b>");
  EXPECT_EQ(g.Remainder(g.text(), false), " \n");  // no calls: streamed + remainder == text
}

TEST(ToolTextGate, HoldsFromTheToolCallTag) {
  ToolTextGate g;
  EXPECT_EQ(g.Push("Checking.\n<tool"), "Checking.");
  EXPECT_EQ(g.Push("_call>\n{\"name\": \"f\"}"), "");
  EXPECT_EQ(g.Push("</tool_call> after"), "");
  EXPECT_EQ(g.Remainder("Checking.\nafter", true), "\nafter");
  EXPECT_EQ(g.Remainder("Checking.", true), "");
}

TEST(ToolTextGate, APartialTagThatIsNotOneIsReleased) {
  ToolTextGate g;
  EXPECT_EQ(g.Push("a <tool"), "a");
  EXPECT_EQ(g.Push("box> b"), " <toolbox> b");
  EXPECT_EQ(g.Remainder(g.text(), false), "");
}

TEST(ToolTextGate, BareJsonIsHeldEntirely) {
  ToolTextGate g;
  EXPECT_EQ(PushAll(&g, {"\n", " {\"name\": \"f\", ", "\"parameters\": {}}"}), "");
  EXPECT_EQ(g.Remainder("", true), "");
  ToolTextGate tag;
  EXPECT_EQ(PushAll(&tag, {"<|py", "thon_tag|>{\"name\": \"f\"}"}), "");
  ToolTextGate not_tag;
  EXPECT_EQ(PushAll(&not_tag, {"<|py", "x"}), "<|pyx");
}

TEST(ToolTextGate, TextAfterAToolCallWithoutCallsIsKept) {
  ToolTextGate g;  // a malformed block: the parser finds no call, all text is the message
  EXPECT_EQ(PushAll(&g, {"see <tool_call>not json</tool_call>"}), "see");
  EXPECT_EQ(g.Remainder(g.text(), false), " <tool_call>not json</tool_call>");
}

}  // namespace
}  // namespace pg
