// passes::apply_aliases: `#define f f_v2` binds the function as `f`, calling `f_v2`.
#include <gtest/gtest.h>

#include "model/model.hpp"
#include "passes/passes.hpp"

namespace {

using namespace cubind::model;
using cubind::passes::apply_aliases;

Model with(std::vector<std::string> functions, std::vector<Alias> aliases) {
  Model m;
  m.library = "case";
  m.headers = {"case.h"};
  for (const auto& name : functions) {
    Function f;
    f.name = name;
    f.header = "case.h";
    m.functions.push_back(f);
  }
  m.aliases = std::move(aliases);
  return m;
}

TEST(ApplyAliases, VersionedSymbolGetsThePublicName) {
  Model m = with({"cuCtxCreate_v4", "cuInit"}, {{"cuCtxCreate", "cuCtxCreate_v4", "case.h"}});
  apply_aliases(m);
  ASSERT_EQ(m.functions.size(), 2u);
  EXPECT_EQ(m.functions[0].name, "cuCtxCreate");
  EXPECT_EQ(m.functions[0].alias_of, "cuCtxCreate_v4");
  EXPECT_EQ(m.functions[1].name, "cuInit");
  EXPECT_EQ(m.functions[1].alias_of, "");
  EXPECT_NE(m.function("cuCtxCreate"), nullptr);
  EXPECT_EQ(m.function("cuCtxCreate_v4"), nullptr);
  EXPECT_EQ(m.aliases.size(), 1u);  // the aliases themselves are kept
}

TEST(ApplyAliases, PastedPtdsSymbol) {
  Model m = with({"cuMemcpy_ptds"}, {{"cuMemcpy", "cuMemcpy_ptds", "case.h"}});
  apply_aliases(m);
  EXPECT_EQ(m.functions[0].name, "cuMemcpy");
  EXPECT_EQ(m.functions[0].alias_of, "cuMemcpy_ptds");
}

TEST(ApplyAliases, IdentityAliasChangesNothing) {
  // `#define cuLaunchKernel __API_PTSZ(cuLaunchKernel)` with the identity macro.
  Model m = with({"cuLaunchKernel"}, {{"cuLaunchKernel", "cuLaunchKernel", "case.h"}});
  apply_aliases(m);
  EXPECT_EQ(m.functions[0].name, "cuLaunchKernel");
  EXPECT_EQ(m.functions[0].alias_of, "");
}

TEST(ApplyAliases, AliasWhoseNameIsDeclaredIsIgnored) {
  // Both the old and the new symbol are declared: each keeps its own name.
  Model m = with({"cuOld", "cuOld_v2"}, {{"cuOld", "cuOld_v2", "case.h"}});
  apply_aliases(m);
  EXPECT_EQ(m.functions[0].name, "cuOld");
  EXPECT_EQ(m.functions[1].name, "cuOld_v2");
  EXPECT_EQ(m.functions[1].alias_of, "");
}

TEST(ApplyAliases, AliasToAnUndeclaredTargetChangesNothing) {
  Model m = with({"cuA"}, {{"cuB", "cuB_v2", "case.h"}});
  apply_aliases(m);
  EXPECT_EQ(m.functions[0].name, "cuA");
  EXPECT_EQ(m.functions[0].alias_of, "");
}

TEST(ApplyAliases, EveryAliasedFunctionIsRenamed) {
  Model m = with({"f_v2", "g_v3", "h"}, {{"f", "f_v2", "case.h"}, {"g", "g_v3", "case.h"}});
  apply_aliases(m);
  EXPECT_EQ(m.functions[0].name, "f");
  EXPECT_EQ(m.functions[0].alias_of, "f_v2");
  EXPECT_EQ(m.functions[1].name, "g");
  EXPECT_EQ(m.functions[1].alias_of, "g_v3");
  EXPECT_EQ(m.functions[2].name, "h");
}

}  // namespace
