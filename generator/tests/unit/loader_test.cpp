// Loader names for the toolkit the headers came from.
#include <gtest/gtest.h>

#include "passes/passes.hpp"

using cubind::passes::expand_loader_name;

TEST(LoaderNames, CudaMajorComesFromTheHeaders) {
  EXPECT_EQ(expand_loader_name("libnvrtc.so.{cuda_major}", "12.9"), "libnvrtc.so.12");
  EXPECT_EQ(expand_loader_name("nvidia/cu{cuda_major}/lib", "13.0"), "nvidia/cu13/lib");
  EXPECT_EQ(expand_loader_name("libcuda.so.1", "13.0"), "libcuda.so.1");
}

TEST(LoaderNames, OtherPlaceholdersAndMissingVersionsAreErrors) {
  EXPECT_THROW(expand_loader_name("libx.so.{major}", "13.0"), std::runtime_error);
  EXPECT_THROW(expand_loader_name("libx.so.{cuda_major}", ""), std::runtime_error);
}
