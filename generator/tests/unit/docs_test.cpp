// emit::plain_text and the docstring helpers of emit/docs.hpp.
#include <gtest/gtest.h>

#include "emit/docs.hpp"

namespace {

using cubind::emit::entity_docstring;
using cubind::emit::function_docstring;
using cubind::emit::value_docstring;
using cubind::emit::plain_text;
using cubind::emit::python_string_body;
namespace model = cubind::model;

TEST(PlainText, LinkKeepsItsText) {
  EXPECT_EQ(plain_text("- \\link #nvrtcResult NVRTC_SUCCESS \\endlink"), "- NVRTC_SUCCESS");
  EXPECT_EQ(plain_text("\\link nvrtcResult the result codes\\endlink."), "the result codes.");
  // libNVVM writes the target with doxygen's `::` marker.
  EXPECT_EQ(plain_text("- \\link ::nvvmResult NVVM_SUCCESS \\endlink"), "- NVVM_SUCCESS");
  EXPECT_EQ(plain_text("- \\link #nvrtcResult NVRTC_SUCCESS \\endlink\n- \\link #nvrtcResult "
                       "NVRTC_ERROR_INVALID_INPUT \\endlink"),
            "- NVRTC_SUCCESS\n- NVRTC_ERROR_INVALID_INPUT");
}

TEST(PlainText, RefKeepsTheName) {
  EXPECT_EQ(plain_text("see \\ref #cuInit and \\ref cuCtxCreate"), "see cuInit and cuCtxCreate");
}

TEST(PlainText, InlineCommandsAreDropped) {
  EXPECT_EQ(plain_text("sets \\p major and \\p minor"), "sets major and minor");
  EXPECT_EQ(plain_text("\\c NULL, \\e really, \\b bold, \\a arg, \\em emph"), "NULL, really, bold, arg, emph");
  EXPECT_EQ(plain_text("in \\p *major"), "in *major");
}

TEST(PlainText, ScopeAndHashPrefixesAreDropped) {
  EXPECT_EQ(plain_text("::CUDA_SUCCESS, ::CUDA_ERROR_INVALID_VALUE"), "CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(plain_text("with ::cuCtxCreate()"), "with cuCtxCreate()");
  EXPECT_EQ(plain_text("the given #nvrtcResult code."), "the given nvrtcResult code.");
}

TEST(PlainText, EscapedNewlineBecomesALineBreak) {
  EXPECT_EQ(plain_text("CUDA program name.\\n \\p name can be \\c NULL"), "CUDA program name.\n name can be NULL");
  EXPECT_EQ(plain_text("last.\\n"), "last.\n");
  // `\note`-like words are not `\n`.
  EXPECT_EQ(plain_text("\\nothing"), "\\nothing");
}

TEST(PlainText, CodeMarkersAreDropped) {
  EXPECT_EQ(plain_text("as:\n\\code\n  x = 1;\n\\endcode\nthen"), "as:\n\n  x = 1;\n\nthen");
  EXPECT_EQ(plain_text("\\code{.cpp}\nint x;\n\\endcode"), "\nint x;\n");
}

TEST(PlainText, EscapedCharacters) {
  EXPECT_EQ(plain_text("a \\< b \\> c \\& d \\% e \\\""), "a < b > c & d % e \"");
}

TEST(PlainText, PlainTextIsUnchanged) {
  EXPECT_EQ(plain_text(""), "");
  EXPECT_EQ(plain_text("Nothing to do here (really): 1 + 2 = 3."), "Nothing to do here (really): 1 + 2 = 3.");
  EXPECT_EQ(plain_text("a\nb\n\nc"), "a\nb\n\nc");
}

TEST(PlainText, NvrtcParamText) {
  EXPECT_EQ(plain_text("Sources of the headers.\\n \\p headers can be \\c NULL when \\p numHeaders is 0."),
            "Sources of the headers.\n headers can be NULL when numHeaders is 0.");
}

// cuda.h: "Flags for ::CUstreamBatchMemOpParams::memoryBarrier". The leading
// `::` is doxygen's link marker and goes; between two names it becomes the
// attribute access Python users write.
TEST(PlainText, ScopeBetweenNamesBecomesAttributeAccess) {
  EXPECT_EQ(plain_text("Flags for ::CUstreamBatchMemOpParams::memoryBarrier"),
            "Flags for CUstreamBatchMemOpParams.memoryBarrier");
}

// nvrtc.h (nvrtcGetLoweredName's doc): `\c \#define`. The `#(\w+)` rule runs
// before the escape rule `\\([<>&%"])`, which does not list `#` anyway, so the
// text becomes "\define" instead of "#define".
TEST(PlainText, EscapedHashIsKept) {
  EXPECT_EQ(plain_text("in a \\c \\#define directive"), "in a #define directive");
}

// ---- docstrings ----

model::Function sample_function() {
  model::Function f;
  f.name = "caseGetName";
  model::Param h;
  h.name = h.py_name = "h";  // py_name: passes::name_python's
  h.type.spelling = "caseHandle";
  model::Param out;
  out.name = out.py_name = "name";
  out.direction = model::Direction::Out;
  out.conversion.input = false;  // returned, not taken (assign_conversions)
  model::Param flags;
  flags.name = flags.py_name = "flags";
  flags.type.spelling = "int";
  f.params = {h, out, flags};
  f.doc.brief = "Returns the \\p h name.";
  f.doc.body = "See ::caseSetName.";
  f.doc.params = {{"h", "in", "The handle.\\n Not \\c NULL."}, {"name", "out", "The name."}};
  f.doc.returns = "- \\link #caseResult CASE_SUCCESS \\endlink";
  return f;
}

TEST(FunctionDocstring, Sections) {
  const std::string doc =
      function_docstring(sample_function(), "caseResult", {{"name", "bytes", "The name."}});
  EXPECT_EQ(doc,
            "Returns the h name.\n\n"
            "See caseSetName.\n\n"
            "Parameters\n----------\n"
            "h\n    The handle.\n     Not NULL.\n"
            "flags\n    int\n"  // undocumented: its C type
            "\n"
            "Returns\n-------\n"
            "caseResult\n"
            "    - CASE_SUCCESS\n"
            "name : bytes\n"
            "    The name.\n");
}

TEST(FunctionDocstring, ABufferTheCallWritesIsTakenSoListed) {
  // nvrtcGetPTX's ptx: an output of C, but the caller's buffer: a parameter.
  model::Function f = sample_function();
  f.params[1].conversion.input = true;
  const std::string doc = function_docstring(f, "caseResult", {});
  EXPECT_NE(doc.find("name\n    The name.\n"), std::string::npos) << doc;
}

TEST(FunctionDocstring, EachInputsPythonFormsFollowItsText) {
  const std::string doc = function_docstring(sample_function(), "caseResult", {},
                                             {{"h", "caseHandle, an int (the raw value), or None (NULL)"}});
  EXPECT_NE(doc.find("h\n    The handle.\n     Not NULL.\n    Takes caseHandle, an int (the raw value), or None (NULL).\n"
                     "flags\n    int\n"),
            std::string::npos)
      << doc;
  EXPECT_EQ(doc.find("caseGetName("), std::string::npos);  // help() shows the signature: not repeated
}

TEST(FunctionDocstring, AValueFunctionReturnsItsSuccessStatusFirst) {
  const std::string doc = value_docstring(sample_function(), "caseResult", "CASE_SUCCESS", "bytes");
  EXPECT_NE(doc.find("Returns\n-------\ncaseResult\n    Always CASE_SUCCESS: this function reports no error.\n"
                     "value : bytes\n    - CASE_SUCCESS\n"),
            std::string::npos)
      << doc;
}

TEST(EntityDocstring, BriefBodyAndFallback) {
  model::Doc doc;
  EXPECT_EQ(entity_docstring(doc, "Enum X of the C API."), "Enum X of the C API.");
  doc.brief = "The \\p x enum.";
  EXPECT_EQ(entity_docstring(doc, "fallback"), "The x enum.");
  doc.body = "More about ::X.";
  EXPECT_EQ(entity_docstring(doc, "fallback"), "The x enum.\n\nMore about X.");
}

TEST(PythonStringBody, EscapesQuotesAndBackslashesAndTrimsTheEnd) {
  EXPECT_EQ(python_string_body("say \"hi\" \\ bye\n\n  "), "say \\\"hi\\\" \\\\ bye");
  EXPECT_EQ(python_string_body("\"\"\""), "\\\"\\\"\\\"");
}

}  // namespace
