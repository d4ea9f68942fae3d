// spec::read_package: a spec's [package] table, and its errors.
#include "spec/package.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace {

using cubind::spec::read_package;

TEST(ReadPackage, AbsentTableGivesTheDefaults) {
  const auto p = read_package("[library]\nname = \"x\"\n", "x.toml");
  EXPECT_EQ(p.doc, "");
  EXPECT_FALSE(p.shared_namespace);
  EXPECT_TRUE(p.submodules.empty());
}

TEST(ReadPackage, ReadsEveryKey) {
  const auto p = read_package(R"([package]
doc = "The x library."
shared_namespace = true
submodules = { b = "x.b", a = "y" }
)",
                              "x.toml");
  EXPECT_EQ(p.doc, "The x library.");
  EXPECT_TRUE(p.shared_namespace);
  const std::vector<std::pair<std::string, std::string>> by_name{{"a", "y"}, {"b", "x.b"}};
  EXPECT_EQ(p.submodules, by_name);
}

TEST(ReadPackage, UnknownKeyFailsNamingIt) {
  try {
    read_package("[package]\ndocs = \"typo\"\n", "x.toml");
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("x.toml: package.docs: unknown key"), std::string::npos) << e.what();
  }
}

TEST(ReadPackage, WrongTypesFail) {
  EXPECT_THROW(read_package("[package]\nshared_namespace = \"yes\"\n", "x.toml"), std::runtime_error);
  EXPECT_THROW(read_package("[package]\nsubmodules = [\"a\"]\n", "x.toml"), std::runtime_error);
  EXPECT_THROW(read_package("[package]\nsubmodules = { a = 1 }\n", "x.toml"), std::runtime_error);
  EXPECT_THROW(read_package("package = 1\n", "x.toml"), std::runtime_error);
}

}  // namespace
