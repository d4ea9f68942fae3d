/* Golden case "package": the package's __init__.py from the spec's [package].
 *
 * Expect in fragments/package_init.py: the spec's doc as the docstring (its
 * quote and backslash escaped), the __path__ that takes in other
 * distributions' packages of the same name (shared_namespace), and
 * reexport's submodules by name. The other cases show the
 * default docstring and neither of these. fragments/py_typed: the banner.
 */
#ifndef CASE_PACKAGE_H
#define CASE_PACKAGE_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
caseResult caseInit(unsigned int flags);

#endif
