// parse::parse_comment: doxygen comments as nvrtc.h and cuda.h write them.
#include <gtest/gtest.h>

#include "parse/comments.hpp"

namespace {

using cubind::model::Doc;
using cubind::parse::parse_comment;

// ---- nvrtc.h style: \brief, \param [in]/[out] name text, \return lists ----

TEST(ParseComment, NvrtcBriefParamsAndLinkReturnList) {
  const Doc d = parse_comment(R"(/**
 * \ingroup query
 * \brief   nvrtcVersion sets the output parameters \p major and \p minor
 *          with the CUDA Runtime Compilation version number.
 *
 * \param   [out] major CUDA Runtime Compilation major version number.
 * \param   [out] minor CUDA Runtime Compilation minor version number.
 * \return
 *   - \link #nvrtcResult NVRTC_SUCCESS \endlink
 *   - \link #nvrtcResult NVRTC_ERROR_INVALID_INPUT \endlink
 *
 */)");
  EXPECT_EQ(d.brief,
            "nvrtcVersion sets the output parameters \\p major and \\p minor with the CUDA Runtime Compilation "
            "version number.");
  ASSERT_EQ(d.params.size(), 2u);
  EXPECT_EQ(d.params[0].name, "major");
  EXPECT_EQ(d.params[0].direction, "out");
  EXPECT_EQ(d.params[0].text, "CUDA Runtime Compilation major version number.");
  EXPECT_EQ(d.params[1].name, "minor");
  EXPECT_EQ(d.params[1].direction, "out");
  EXPECT_EQ(d.returns,
            "- \\link #nvrtcResult NVRTC_SUCCESS \\endlink\n"
            "- \\link #nvrtcResult NVRTC_ERROR_INVALID_INPUT \\endlink");
  EXPECT_EQ(d.body, "");  // \ingroup is dropped
}

TEST(ParseComment, ParamInWithText) {
  const Doc d = parse_comment("/**\n * \\param [in] result CUDA Runtime Compilation API result code.\n */");
  ASSERT_EQ(d.params.size(), 1u);
  EXPECT_EQ(d.params[0].name, "result");
  EXPECT_EQ(d.params[0].direction, "in");
  EXPECT_EQ(d.params[0].text, "CUDA Runtime Compilation API result code.");
}

TEST(ParseComment, ParamOutWithoutText) {
  const Doc d = parse_comment("/**\n * \\param [out] x\n */");
  ASSERT_EQ(d.params.size(), 1u);
  EXPECT_EQ(d.params[0].name, "x");
  EXPECT_EQ(d.params[0].direction, "out");
  EXPECT_EQ(d.params[0].text, "");
}

TEST(ParseComment, ParamDirectionAttachedAndInOut) {
  const Doc d = parse_comment(
      "/**\n * \\param[in] a first\n * \\param[in,out] b second\n * \\param [in, out] c third\n */");
  ASSERT_EQ(d.params.size(), 3u);
  EXPECT_EQ(d.params[0].direction, "in");
  EXPECT_EQ(d.params[0].text, "first");
  EXPECT_EQ(d.params[1].name, "b");
  EXPECT_EQ(d.params[1].direction, "in,out");
  EXPECT_EQ(d.params[2].name, "c");
  EXPECT_EQ(d.params[2].direction, "in,out");  // spaces inside the brackets are dropped
}

TEST(ParseComment, MultiLineBriefAndParamAreJoinedWithSpaces) {
  const Doc d = parse_comment(R"(/**
 * \brief   nvrtcCreateProgram creates an instance of nvrtcProgram with the
 *          given input parameters, and sets the output parameter \p prog with
 *          it.
 *
 * \param   [in]  name         CUDA program name.\n
 *                             \p name can be \c NULL; \c "default_program" is
 *                             used when \p name is \c NULL or "".
 * \param   [in]  numHeaders   Number of headers used.
 */)");
  EXPECT_EQ(d.brief,
            "nvrtcCreateProgram creates an instance of nvrtcProgram with the given input parameters, and sets the "
            "output parameter \\p prog with it.");
  ASSERT_EQ(d.params.size(), 2u);
  EXPECT_EQ(d.params[0].name, "name");
  EXPECT_EQ(d.params[0].direction, "in");
  EXPECT_EQ(d.params[0].text,
            "CUDA program name.\\n \\p name can be \\c NULL; \\c \"default_program\" is used when \\p name is \\c "
            "NULL or \"\".");
  EXPECT_EQ(d.params[1].name, "numHeaders");
  EXPECT_EQ(d.params[1].text, "Number of headers used.");
}

TEST(ParseComment, BriefEndsAtBlankLineAndTheRestIsBody) {
  const Doc d = parse_comment(R"(/**
 * \brief   nvrtcProgram is the unit of compilation, and an opaque handle for
 *          a program.
 *
 * To compile a CUDA program string, an instance of nvrtcProgram must be
 * created first with ::nvrtcCreateProgram, then compiled with
 * ::nvrtcCompileProgram.
 */)");
  EXPECT_EQ(d.brief, "nvrtcProgram is the unit of compilation, and an opaque handle for a program.");
  EXPECT_EQ(d.body,
            "To compile a CUDA program string, an instance of nvrtcProgram must be\n"
            "created first with ::nvrtcCreateProgram, then compiled with\n"
            "::nvrtcCompileProgram.");
}

TEST(ParseComment, ReturnOnOneLine) {
  const Doc d = parse_comment("/**\n * \\return  Message string for the given #nvrtcResult code.\n */");
  EXPECT_EQ(d.returns, "Message string for the given #nvrtcResult code.");
  EXPECT_TRUE(d.params.empty());
}

TEST(ParseComment, ReturnsAndRetvalAreReturns) {
  EXPECT_EQ(parse_comment("/** \\returns the count */").returns, "the count");
  EXPECT_EQ(parse_comment("/**\n * \\retval A first\n * \\retval B second\n */").returns, "A first\nB second");
}

TEST(ParseComment, AtSignCommands) {
  const Doc d = parse_comment("/**\n * @brief Short.\n * @param n the count\n * @return status\n */");
  EXPECT_EQ(d.brief, "Short.");
  ASSERT_EQ(d.params.size(), 1u);
  EXPECT_EQ(d.params[0].name, "n");
  EXPECT_EQ(d.params[0].text, "the count");
  EXPECT_EQ(d.returns, "status");
}

// ---- cuda.h style: `\param name - text`, `\return ::A, ::B`, \notefnerr, \sa ----

TEST(ParseComment, DriverStyleParamWithDash) {
  const Doc d = parse_comment(R"(/**
 * \brief Create a CUDA context
 *
 * \param pctx   - Returned context handle of the new context
 * \param flags  - Context creation flags
 * \param dev    - Device to create context on
 */)");
  EXPECT_EQ(d.brief, "Create a CUDA context");
  ASSERT_EQ(d.params.size(), 3u);
  EXPECT_EQ(d.params[0].name, "pctx");
  EXPECT_EQ(d.params[0].direction, "");
  EXPECT_EQ(d.params[0].text, "Returned context handle of the new context");
  EXPECT_EQ(d.params[1].name, "flags");
  EXPECT_EQ(d.params[1].text, "Context creation flags");
  EXPECT_EQ(d.params[2].name, "dev");
  EXPECT_EQ(d.params[2].text, "Device to create context on");
}

TEST(ParseComment, DriverStyleReturnListNotefnerrAndSeeAlso) {
  const Doc d = parse_comment(R"(/**
 * \brief Returns the compute capability of the device
 *
 * Returns in \p *major and \p *minor the major and minor revision numbers that
 * define the compute capability of the device \p dev.
 *
 * \param major - Major revision number
 * \param minor - Minor revision number
 * \param dev   - Device handle
 *
 * \return
 * ::CUDA_SUCCESS,
 * ::CUDA_ERROR_DEINITIALIZED,
 * ::CUDA_ERROR_INVALID_DEVICE
 * \notefnerr
 *
 * \sa
 * ::cuDeviceGetAttribute,
 * ::cuDeviceGetCount
 */)");
  EXPECT_EQ(d.brief, "Returns the compute capability of the device");
  ASSERT_EQ(d.params.size(), 3u);
  EXPECT_EQ(d.params[2].name, "dev");
  EXPECT_EQ(d.params[2].text, "Device handle");
  EXPECT_EQ(d.returns, "::CUDA_SUCCESS,\n::CUDA_ERROR_DEINITIALIZED,\n::CUDA_ERROR_INVALID_DEVICE");
  const std::string first =
      "Returns in \\p *major and \\p *minor the major and minor revision numbers that\n"
      "define the compute capability of the device \\p dev.\n";
  const std::string see_also = "See also: \n::cuDeviceGetAttribute,\n::cuDeviceGetCount";
  EXPECT_EQ(d.body.rfind(first, 0), 0u) << d.body;
  ASSERT_GE(d.body.size(), see_also.size());
  EXPECT_EQ(d.body.substr(d.body.size() - see_also.size()), see_also) << d.body;
}

TEST(ParseComment, BodyLinesKeepTheirLineBreaks) {
  const Doc d = parse_comment("/**\n * \\brief B.\n *\n * line one\n *   line two indented\n */");
  EXPECT_EQ(d.body, "line one\n  line two indented");
}

// A blank line between two body paragraphs is lost: comments.cpp,
// parse_comment(), the `text.empty()` branch only ends the current line
// (body += "\n" unless it already ends with one), which the next body line
// would do anyway, so "A.\n\nB." comes out as "A.\nB." and the docstrings
// run the paragraphs together.
TEST(ParseComment, BlankLineBetweenParagraphsIsKept) {
  const Doc d = parse_comment("/**\n * \\brief B.\n *\n * First paragraph.\n *\n * Second paragraph.\n */");
  EXPECT_EQ(d.body, "First paragraph.\n\nSecond paragraph.");
}

TEST(ParseComment, ReturnOnTheCommandLine) {
  const Doc d = parse_comment(
      "/**\n * \\return ::CUDA_SUCCESS, ::CUDA_ERROR_INVALID_VALUE,\n * ::CUDA_ERROR_NOT_INITIALIZED\n */");
  EXPECT_EQ(d.returns, "::CUDA_SUCCESS, ::CUDA_ERROR_INVALID_VALUE,\n::CUDA_ERROR_NOT_INITIALIZED");
}

TEST(ParseComment, SeeAlsoOnOneLine) {
  const Doc d = parse_comment("/**\n * \\brief B.\n *\n * \\sa ::cuX, ::cuY\n */");
  EXPECT_EQ(d.brief, "B.");
  EXPECT_EQ(d.body, "See also: ::cuX, ::cuY");
}

TEST(ParseComment, NotefnerrAndGroupsAreDropped) {
  const Doc d = parse_comment(
      "/**\n * \\ingroup CUDA_CTX\n * \\brief B.\n *\n * \\notefnerr\n * \\note_init_rt\n * \\hideinitializer\n */");
  EXPECT_EQ(d.brief, "B.");
  EXPECT_EQ(d.body, "");
}

TEST(ParseComment, NoteBecomesBodyText) {
  const Doc d = parse_comment("/**\n * \\brief B.\n *\n * \\note Careful here.\n */");
  EXPECT_EQ(d.body, "Note: Careful here.");
}

// ---- trailing member comments ----

TEST(ParseComment, TrailingMemberComment) {
  const Doc d = parse_comment("/**< Automatic scheduling */");
  EXPECT_EQ(d.brief, "");  // no \brief: the text is the body
  EXPECT_EQ(d.body, "Automatic scheduling");
  EXPECT_TRUE(d.params.empty());
  EXPECT_EQ(d.returns, "");
}

TEST(ParseComment, TrailingMemberCommentVariants) {
  EXPECT_EQ(parse_comment("/*!< Spin when waiting */").body, "Spin when waiting");
  EXPECT_EQ(parse_comment("///< Yield when waiting").body, "Yield when waiting");
  EXPECT_EQ(parse_comment("/**< \\brief Block on sync */").brief, "Block on sync");
}

TEST(ParseComment, OneLineBlockComment) {
  const Doc d = parse_comment("/** Just one line. */");
  EXPECT_EQ(d.body, "Just one line.");
  EXPECT_EQ(d.brief, "");
}

TEST(ParseComment, TripleSlashLines) {
  const Doc d = parse_comment("/// \\brief First line\n/// continues here.\n///\n/// Body text.");
  EXPECT_EQ(d.brief, "First line continues here.");
  EXPECT_EQ(d.body, "Body text.");
}

TEST(ParseComment, EmptyComment) {
  EXPECT_TRUE(parse_comment("/** */").empty());
  EXPECT_TRUE(parse_comment("/**\n *\n */").empty());
}

// ---- \code ... \endcode kept verbatim ----

TEST(ParseComment, CodeBlockKeptVerbatim) {
  const Doc d = parse_comment(R"(/**
 * \brief Pitch.
 *
 * The address is computed as:
 * \code
 *   T* pElement = (T*)((char*)BaseAddress + Row * Pitch) + Column;
 *
 *   if (x) {
 *       y();   // \p not a command here
 *   }
 * \endcode
 * After the code.
 */)");
  EXPECT_EQ(d.brief, "Pitch.");
  EXPECT_EQ(d.body,
            "The address is computed as:\n"
            "\\code\n"
            "  T* pElement = (T*)((char*)BaseAddress + Row * Pitch) + Column;\n"
            "\n"
            "  if (x) {\n"
            "      y();   // \\p not a command here\n"
            "  }\n"
            "\\endcode\n"
            "After the code.");
}

TEST(ParseComment, ParamsInsideCodeAreNotParams) {
  const Doc d = parse_comment("/**\n * \\code\n * \\param [in] x not a param\n * \\endcode\n */");
  EXPECT_TRUE(d.params.empty());
  EXPECT_EQ(d.body, "\\code\n\\param [in] x not a param\n\\endcode");
}

// cuda.h writes some code blocks without the leading `*` (cuDeviceGetProperties):
// their relative indentation should survive. Today every leading blank is
// stripped from star-less lines (comments.cpp, text_lines(): the `lead` regex
// `^\s*\*?(?!/) ?` eats all the indentation when there is no `*`).
TEST(ParseComment, CodeBlockWithoutStarsKeepsIndentation) {
  const Doc d = parse_comment(
      "/**\n * \\code\n     typedef struct S {\n     int x;\n  } S;\n * \\endcode\n */");
  // Verbatim or with the common indentation removed: `int x;` stays indented.
  EXPECT_NE(d.body.find("  int x;"), std::string::npos) << d.body;
}

}  // namespace
