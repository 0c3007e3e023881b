#include "server/core/hosted_tools.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(HostedTools, KnowsOpenAisHostedTypesAndTheirDatedVersions) {
  for (const char* t : {"web_search", "web_search_preview", "web_search_preview_2025_03_11", "web_search_2025_08_26",
                        "file_search", "code_interpreter", "image_generation", "computer_use_preview", "mcp",
                        "local_shell", "shell", "apply_patch", "custom"}) {
    EXPECT_TRUE(IsHostedToolType(t)) << t;
  }
  for (const char* t : {"function", "namespace", "", "web_search_", "web_search_2025_08", "web_searchx",
                        "web_search_2025_08_2x", "teleport"}) {
    EXPECT_FALSE(IsHostedToolType(t)) << t;
  }
}

}  // namespace
}  // namespace pg
