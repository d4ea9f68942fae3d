// emit::Templates: the contract between views and templates, and the log of
// fragments the golden cases compare.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "emit/templates.hpp"

namespace {

using cubind::emit::Shape;
using cubind::emit::Templates;
using cubind::emit::View;

class TemplatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("cubind_templates_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / (name + ".mustache")) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(TemplatesTest, RendersKeysFromTheViewAndItsParents) {
  write("t", "{{a}} {{b}}{{#flag}}!{{/flag}}");
  Templates t(dir_.string());
  View parent;
  parent.set("b", "parent");
  View view;
  view.set("a", "view");
  EXPECT_EQ(t.render("t", view, {&parent}), "view parent");
}

TEST_F(TemplatesTest, AKeyNoViewProvidesIsAnError) {
  write("t", "{{a}} {{missing}}");
  Templates t(dir_.string());
  View view;
  view.set("a", "x");
  try {
    t.render("t", view);
    FAIL() << "rendered a key no view provides";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "template t renders keys no view provides: missing");
  }
}

TEST_F(TemplatesTest, AbsentSectionsAreFalse) {
  write("t", "{{#opt}}{{opt}}{{/opt}}{{^opt}}none{{/opt}}");
  Templates t(dir_.string());
  EXPECT_EQ(t.render("t", View()), "none");
}

TEST_F(TemplatesTest, ViewKeysNoTemplateUsesAreReported) {
  write("t", "{{a}}");
  Templates t(dir_.string());
  View view;
  view.set("a", "x").set("stray", "y");
  t.render("t", view);
  EXPECT_EQ(t.unused_keys(), std::set<std::string>{"stray"});
}

TEST_F(TemplatesTest, FragmentsAreShapedAndLoggedAsReferences) {
  write("inner", "\n  value  \n");
  write("outer", "[{{#x}}{{text}}{{/x}}]");
  Templates t(dir_.string());
  t.keep_log(true);
  View outer;
  outer.set("x", t.fragment("inner", View(), Shape::Inline, "f.x"));
  EXPECT_EQ(t.render("outer", outer), "[value]");
  // A change of inner.mustache changes only inner's log.
  EXPECT_EQ(t.log().at("outer"), "## outer\n[<<inner: f.x>>]\n");
  EXPECT_EQ(t.log().at("inner"), "## f.x\nvalue\n");
}

}  // namespace
