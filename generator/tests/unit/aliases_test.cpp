// passes::apply_aliases: `#define f f_v2` binds the function as `f`, calling `f_v2`.
#include <gtest/gtest.h>

#include "model/model.hpp"
#include "passes/passes.hpp"
#include "spec/spec.hpp"
#include "unit/builders.hpp"

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

namespace {

TEST(MergeAbiSymbols, WrapperCallsTheVersionedSymbolItForwardsTo) {
  using namespace builders;
  Model m;
  Function wrapper = fn("libCreate", {param("options", ptr(ptr(char_t(true))))});
  Function symbol = fn("__libCreate_13_0", {param("options", ptr(ptr(char_t(true), true)))});
  Function other = fn("__libCreate_13_0_extra", {param("options", ptr(ptr(char_t(true))))});
  Function mismatch = fn("libDestroy", {param("h", handle_t())});
  Function mismatch_symbol = fn("__libDestroy_13_0", {param("h", int_t())});
  m.functions = {symbol, wrapper, other, mismatch, mismatch_symbol};
  cubind::spec::Spec s;
  s.conventions.abi_symbol = cubind::spec::Rewrite{"^(lib\\w+)$", "__$1_[0-9]+_[0-9]+"};
  cubind::passes::merge_abi_symbols(m, s);
  ASSERT_NE(m.function("libCreate"), nullptr);
  EXPECT_EQ(m.function("libCreate")->alias_of, "__libCreate_13_0");
  EXPECT_EQ(m.function("__libCreate_13_0"), nullptr);  // one function, bound under the wrapper's name
  EXPECT_NE(m.function("__libCreate_13_0_extra"), nullptr);  // does not match the rewrite
  // Parameters that differ beyond const: not a forwarder.
  EXPECT_EQ(m.function("libDestroy")->alias_of, "");
  EXPECT_NE(m.function("__libDestroy_13_0"), nullptr);
}

TEST(MergeAbiSymbols, WithoutTheConventionNothingMerges) {
  using namespace builders;
  Model m;
  m.functions = {fn("libCreate", {}), fn("__libCreate_13_0", {})};
  cubind::passes::merge_abi_symbols(m, cubind::spec::Spec{});
  EXPECT_EQ(m.functions.size(), 2u);
}

}  // namespace

TEST(ChooseAbiVersions, MatchingPrototypeElseTheHeadersVersion) {
  cubind::model::Model m;
  m.cuda_version = 13000;
  cubind::model::Function old_form, plain;
  old_form.name = "xSync";
  old_form.abi_signature = "(void)";
  plain.name = "xOther";
  plain.abi_signature = "(int;)";
  m.functions = {old_form, plain};
  m.abi_prototypes = {{"xSync", "(void)", 2000}, {"xSync", "(int;)", 12000}};
  cubind::passes::choose_abi_versions(m);
  EXPECT_EQ(m.functions[0].abi_version, 2000);
  EXPECT_EQ(m.functions[1].abi_version, 13000);
}

TEST(NameProcSymbols, ARenameToAnotherFunctionIsAskedForByThatName) {
  // cuda.h: `#define cuGraphInstantiate cuGraphInstantiateWithFlags`; the
  // driver's cuGraphInstantiate is the older ABI with other parameters.
  cubind::model::Model m;
  cubind::model::Function renamed, versioned, plain;
  renamed.name = "cuGraphInstantiate";
  renamed.alias_of = "cuGraphInstantiateWithFlags";
  versioned.name = "cuMemAlloc";
  versioned.alias_of = "cuMemAlloc_v2";
  plain.name = "cuInit";
  m.functions = {renamed, versioned, plain};
  cubind::spec::Spec s;
  s.proc_address_function = "cuGetProcAddress_v2";
  cubind::passes::name_proc_symbols(m, s);
  EXPECT_EQ(m.functions[0].proc_name, "cuGraphInstantiateWithFlags");
  EXPECT_EQ(m.functions[1].proc_name, "");  // asked as cuMemAlloc, at _v2's version
  EXPECT_EQ(m.functions[2].proc_name, "");
}

TEST(NameProcSymbols, NothingForALibraryLoadedBySymbol) {
  cubind::model::Model m;
  cubind::model::Function renamed;
  renamed.name = "f";
  renamed.alias_of = "fWithFlags";
  m.functions = {renamed};
  cubind::passes::name_proc_symbols(m, cubind::spec::Spec{});
  EXPECT_EQ(m.functions[0].proc_name, "");
}

TEST(ChooseAbiVersions, TheResolverNameChoosesThePrototype) {
  cubind::model::Model m;
  m.cuda_version = 13000;
  cubind::model::Function f;
  f.name = "xInstantiate";
  f.proc_name = "xInstantiateWithFlags";
  f.abi_signature = "(int;)";
  m.functions = {f};
  m.abi_prototypes = {{"xInstantiate", "(int;char;)", 11000}, {"xInstantiateWithFlags", "(int;)", 11040}};
  cubind::passes::choose_abi_versions(m);
  EXPECT_EQ(m.functions[0].abi_version, 11040);
}

TEST(ChooseAbiVersions, KnownNameWithoutTheDeclaredParametersIsAnError) {
  // What cuGraphInstantiate was before name_proc_symbols: the resolver,
  // asked at the headers' version, hands back the latest ABI of that name,
  // whose parameters are not the declaration's.
  cubind::model::Model m;
  m.cuda_version = 13000;
  cubind::model::Function f;
  f.name = "xInstantiate";
  f.abi_signature = "(int;)";
  m.functions = {f};
  m.abi_prototypes = {{"xInstantiate", "(int;char;)", 11000}};
  try {
    cubind::passes::choose_abi_versions(m);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("xInstantiate"), std::string::npos);
  }
}
