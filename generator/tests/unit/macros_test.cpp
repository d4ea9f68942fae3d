// parse::classify_macros: `#define`s -> API aliases and constant candidates.
#include <gtest/gtest.h>

#include <algorithm>

#include "parse/macros.hpp"

namespace {

using cubind::parse::classify_macros;
using cubind::parse::MacroClasses;
using cubind::parse::MacroDef;

MacroDef object(const std::string& name, std::vector<std::string> body, const std::string& header = "cuda.h") {
  MacroDef m;
  m.name = name;
  m.body = std::move(body);
  m.header = header;
  return m;
}

MacroDef function(const std::string& name, std::vector<std::string> params, std::vector<std::string> body) {
  MacroDef m;
  m.name = name;
  m.function_like = true;
  m.params = std::move(params);
  m.body = std::move(body);
  m.header = "cuda.h";
  return m;
}

std::vector<std::string> candidate_names(const MacroClasses& c) {
  std::vector<std::string> out;
  for (const auto* m : c.constant_candidates) out.push_back(m->name);
  return out;
}

bool has_candidate(const MacroClasses& c, const std::string& name) {
  const auto names = candidate_names(c);
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(ClassifyMacros, PlainAliasToDeclaredFunction) {
  const std::vector<MacroDef> macros = {object("cuCtxCreate", {"cuCtxCreate_v4"}, "cuda.h")};
  const MacroClasses c = classify_macros(macros, {"cuCtxCreate_v4"});
  ASSERT_EQ(c.aliases.size(), 1u);
  EXPECT_EQ(c.aliases[0].name, "cuCtxCreate");
  EXPECT_EQ(c.aliases[0].target, "cuCtxCreate_v4");
  EXPECT_EQ(c.aliases[0].header, "cuda.h");
  EXPECT_TRUE(c.constant_candidates.empty());
}

TEST(ClassifyMacros, AnAliasOfADeclaredTypeIsATypeAlias) {
  // driver_types.h: `#define cudaStreamAttrID cudaLaunchAttributeID`.
  const std::vector<MacroDef> macros = {object("cudaStreamAttrID", {"cudaLaunchAttributeID"}, "driver_types.h")};
  const MacroClasses c = classify_macros(macros, {}, {"cudaLaunchAttributeID"});
  ASSERT_EQ(c.type_aliases.size(), 1u);
  EXPECT_EQ(c.type_aliases[0].name, "cudaStreamAttrID");
  EXPECT_EQ(c.type_aliases[0].target, "cudaLaunchAttributeID");
  EXPECT_TRUE(c.aliases.empty());
  EXPECT_TRUE(c.constant_candidates.empty());
}

TEST(ClassifyMacros, PlainAliasNeedsTheTargetDeclared) {
  // f_v2 is not a function the headers declare: no alias. Whether it is a
  // constant is the compiler's call (the evaluator drops what does not evaluate).
  const std::vector<MacroDef> macros = {object("f", {"f_v2"})};
  const MacroClasses c = classify_macros(macros, {"f", "g_v2"});
  EXPECT_TRUE(c.aliases.empty());
  EXPECT_EQ(candidate_names(c), std::vector<std::string>{"f"});
}

TEST(ClassifyMacros, PasteAliasThroughOneParameterMacro) {
  const std::vector<MacroDef> macros = {
      function("__API_PTDS", {"api"}, {"api", "##", "_ptds"}),
      object("cuMemcpy", {"__API_PTDS", "(", "cuMemcpy", ")"}),
  };
  const MacroClasses c = classify_macros(macros, {"cuMemcpy_ptds"});
  ASSERT_EQ(c.aliases.size(), 1u);
  EXPECT_EQ(c.aliases[0].name, "cuMemcpy");
  EXPECT_EQ(c.aliases[0].target, "cuMemcpy_ptds");
  EXPECT_TRUE(c.constant_candidates.empty());
}

TEST(ClassifyMacros, PasteAliasOfAVersionedName) {
  const std::vector<MacroDef> macros = {
      function("__CUDA_API_PTDS", {"api"}, {"api", "##", "_ptds"}),
      object("cuMemcpyHtoD", {"__CUDA_API_PTDS", "(", "cuMemcpyHtoD_v2", ")"}),
  };
  const MacroClasses c = classify_macros(macros, {"cuMemcpyHtoD_v2_ptds", "cuMemcpyHtoD_v2"});
  ASSERT_EQ(c.aliases.size(), 1u);
  EXPECT_EQ(c.aliases[0].target, "cuMemcpyHtoD_v2_ptds");
}

TEST(ClassifyMacros, PasteAliasNeedsThePastedTargetDeclared) {
  const std::vector<MacroDef> macros = {
      function("__API_PTDS", {"api"}, {"api", "##", "_ptds"}),
      object("cuMemcpy", {"__API_PTDS", "(", "cuMemcpy", ")"}),
  };
  const MacroClasses c = classify_macros(macros, {"cuMemcpy"});  // only the unpasted name
  EXPECT_TRUE(c.aliases.empty());
  // Four tokens, not a bare identifier: left for the compiler to evaluate (and fail on).
  EXPECT_TRUE(has_candidate(c, "cuMemcpy"));
}

TEST(ClassifyMacros, IdentityMacro) {
  // The default build of cuda.h: `#define __CUDA_API_PTSZ(api) api`.
  const std::vector<MacroDef> macros = {
      function("__API_PTSZ", {"api"}, {"api"}),
      object("cuLaunchKernel", {"__API_PTSZ", "(", "cuLaunchKernel", ")"}),
      object("cuMemcpyAsync", {"__API_PTSZ", "(", "cuMemcpyAsync_v2", ")"}),
  };
  const MacroClasses c = classify_macros(macros, {"cuLaunchKernel", "cuMemcpyAsync_v2"});
  // cuLaunchKernel -> cuLaunchKernel names nothing new and is dropped.
  ASSERT_EQ(c.aliases.size(), 1u);
  EXPECT_EQ(c.aliases[0].name, "cuMemcpyAsync");
  EXPECT_EQ(c.aliases[0].target, "cuMemcpyAsync_v2");
}

TEST(ClassifyMacros, OnlyPastingOneParameterMacrosExpand) {
  const std::vector<MacroDef> macros = {
      function("TWO", {"a", "b"}, {"a", "##", "b"}),
      function("PREFIX", {"api"}, {"_p", "##", "api"}),
      object("f", {"TWO", "(", "g", ")"}),
      object("h", {"PREFIX", "(", "g", ")"}),
  };
  const MacroClasses c = classify_macros(macros, {"g", "_pg", "gg"});
  EXPECT_TRUE(c.aliases.empty());
}

TEST(ClassifyMacros, ReservedNamesAreNotConstants) {
  const std::vector<MacroDef> macros = {
      object("__CUDA_H__", {"1"}),
      object("__CUDA_API_VERSION_INTERNAL", {"1"}),
      object("_ONE_UNDERSCORE", {"1"}),
  };
  const MacroClasses c = classify_macros(macros, {});
  EXPECT_EQ(candidate_names(c), std::vector<std::string>{"_ONE_UNDERSCORE"});
}

TEST(ClassifyMacros, ReservedAliasStillAnAlias) {
  // The alias check comes before the reserved-name rule.
  const std::vector<MacroDef> macros = {object("__f", {"f_v2"})};
  const MacroClasses c = classify_macros(macros, {"f_v2"});
  ASSERT_EQ(c.aliases.size(), 1u);
  EXPECT_EQ(c.aliases[0].name, "__f");
}

TEST(ClassifyMacros, NumericCandidatesKeptInOrder) {
  const std::vector<MacroDef> macros = {
      object("CU_INT", {"42"}),
      object("CU_HEX", {"0x10"}),
      object("CU_UNSIGNED", {"7U"}),
      object("CU_FLOAT", {"1.5f"}),
      object("CU_NEG", {"(", "-", "3", ")"}),
      object("CU_SHIFT", {"(", "1U", "<<", "3", ")"}),
      object("CU_PTR", {"(", "(", "void", "*", ")", "0x01", ")"}),
      object("CU_STR", {"\"text\""}),
  };
  const MacroClasses c = classify_macros(macros, {});
  EXPECT_TRUE(c.aliases.empty());
  EXPECT_EQ(candidate_names(c), (std::vector<std::string>{"CU_INT", "CU_HEX", "CU_UNSIGNED", "CU_FLOAT", "CU_NEG",
                                                          "CU_SHIFT", "CU_PTR", "CU_STR"}));
}

TEST(ClassifyMacros, EmptyAndFunctionLikeMacrosAreSkipped) {
  const std::vector<MacroDef> macros = {
      object("CUDAAPI", {}),
      function("CU_MAX", {"a", "b"}, {"(", "a", ">", "b", "?", "a", ":", "b", ")"}),
  };
  const MacroClasses c = classify_macros(macros, {});
  EXPECT_TRUE(c.aliases.empty());
  EXPECT_TRUE(c.constant_candidates.empty());
}

TEST(ClassifyMacros, BareIdentifierIsACandidate) {
  // `#define CU_KERNEL_NODE_ATTRIBUTE_X CU_LAUNCH_ATTRIBUTE_X` names another
  // constant; plumbing like `stdcall` fails to evaluate and is dropped later.
  const std::vector<MacroDef> macros = {object("CU_CALL", {"stdcall"}), object("CU_TWO_TOKENS", {"unsigned", "int"})};
  const MacroClasses c = classify_macros(macros, {});
  EXPECT_EQ(candidate_names(c), (std::vector<std::string>{"CU_CALL", "CU_TWO_TOKENS"}));
}

TEST(ClassifyMacros, HeaderIsCarried) {
  const std::vector<MacroDef> macros = {object("g", {"g_v3"}, "cudaGL.h")};
  const MacroClasses c = classify_macros(macros, {"g_v3"});
  ASSERT_EQ(c.aliases.size(), 1u);
  EXPECT_EQ(c.aliases[0].header, "cudaGL.h");
}

}  // namespace
