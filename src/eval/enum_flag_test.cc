#include "eval/enum_flag.h"

#include <gtest/gtest.h>

#include "eval/openai_client.h"
#include "eval/prompt_builder.h"

namespace pg {
namespace {

TEST(EnumFlag, ParsesTheChoicesByName) {
  EXPECT_EQ(*ParseCompletionEndpoint("chat"), CompletionEndpoint::kChat);
  EXPECT_EQ(*ParseCompletionEndpoint("completions"), CompletionEndpoint::kCompletions);
  EXPECT_EQ(*ParsePromptStyle("short"), PromptStyle::kShort);
  EXPECT_EQ(*ParsePromptStyle("long"), PromptStyle::kLong);
  EXPECT_STREQ(CompletionEndpointName(CompletionEndpoint::kCompletions), "completions");
  EXPECT_STREQ(PromptStyleName(PromptStyle::kLong), "long");
}

TEST(EnumFlag, AnUnknownNameSaysWhatIsWanted) {
  EXPECT_EQ(ParseCompletionEndpoint("Chat").status().message(), "unknown endpoint \"Chat\" (want chat or completions)");
  EXPECT_EQ(ParsePromptStyle("").status().message(), "unknown prompt style \"\" (want short or long)");
  enum class Three { kA, kB, kC };
  constexpr const char* kThree[] = {"a", "b", "c"};
  EXPECT_EQ(ParseEnumFlag<Three>("d", kThree, "letter").status().message(), "unknown letter \"d\" (want a, b or c)");
}

}  // namespace
}  // namespace pg
