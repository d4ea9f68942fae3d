// Loader names for the toolkit the headers came from.
#include <gtest/gtest.h>

#include "passes/passes.hpp"

using cubind::passes::expand_loader_name;

TEST(LoaderNames, CudaMajorComesFromTheHeaders) {
  EXPECT_EQ(expand_loader_name("libnvrtc.so.{cuda_major}", 12090), "libnvrtc.so.12");
  EXPECT_EQ(expand_loader_name("nvidia/cu{cuda_major}/lib", 13000), "nvidia/cu13/lib");
  EXPECT_EQ(expand_loader_name("libcuda.so.1", 13000), "libcuda.so.1");
}

TEST(LoaderNames, OtherPlaceholdersAndMissingVersionsAreErrors) {
  EXPECT_THROW(expand_loader_name("libx.so.{major}", 13000), std::runtime_error);
  EXPECT_THROW(expand_loader_name("libx.so.{cuda_major}", 0), std::runtime_error);
}

TEST(ResolveLoader, NamesAreExpandedAndTheResolverChosenOnce) {
  cubind::model::Model m;
  m.cuda_version = 12090;
  cubind::spec::Spec s;
  s.sonames = {"libx.so.{cuda_major}"};
  s.toolkit_subdirs = {"lib64"};
  cubind::passes::resolve_loader(m, s);
  EXPECT_EQ(m.loader.sonames, std::vector<std::string>{"libx.so.12"});
  EXPECT_EQ(m.loader.toolkit_subdirs, std::vector<std::string>{"lib64"});
  EXPECT_EQ(m.loader.resolver, "dlsym");
  s.proc_address_function = "xGetProcAddress";
  cubind::passes::resolve_loader(m, s);
  EXPECT_EQ(m.loader.resolver, "proc_address");
}

TEST(VersionText, DerivedFromTheOneInteger) {
  EXPECT_EQ(cubind::model::version_text(13000), "13.0");
  EXPECT_EQ(cubind::model::version_text(12040), "12.4");
  EXPECT_EQ(cubind::model::version_text(0), "");
}
