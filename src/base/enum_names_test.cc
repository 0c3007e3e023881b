#include "base/enum_names.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

enum class Fruit { kApple, kPear, kPlum };
constexpr const char* kFruitNames[] = {"apple", "pear", "plum"};

TEST(EnumNames, NamesEachValueAndFallsBackPastTheTable) {
  EXPECT_STREQ(EnumName(Fruit::kApple, kFruitNames), "apple");
  EXPECT_STREQ(EnumName(Fruit::kPlum, kFruitNames), "plum");
  EXPECT_STREQ(EnumName(static_cast<Fruit>(3), kFruitNames), "?");
  EXPECT_STREQ(EnumName(static_cast<Fruit>(7), kFruitNames, "untyped"), "untyped");
}

TEST(EnumNames, ParsesExactNamesOnly) {
  EXPECT_EQ(EnumFromName<Fruit>("pear", kFruitNames), Fruit::kPear);
  EXPECT_EQ(EnumFromName<Fruit>("plum", kFruitNames), Fruit::kPlum);
  EXPECT_FALSE(EnumFromName<Fruit>("Pear", kFruitNames).has_value());
  EXPECT_FALSE(EnumFromName<Fruit>("pea", kFruitNames).has_value());
  EXPECT_FALSE(EnumFromName<Fruit>("", kFruitNames).has_value());
}

}  // namespace
}  // namespace pg
