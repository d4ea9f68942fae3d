/* Golden case "handle_casts": a handle parameter that also takes another
 * handle class where the function's documentation says so (spec
 * conventions.also_accepts), as cuda.h lets a CUkernel stand for a CUfunction
 * ("passing it to the API by casting to ::CUfunction").
 *
 * Expect in model.json: caseLaunch's and caseOccupancy's f (the phrase in
 * the body, wrapped over two lines in caseOccupancy) with also_accepts =
 * caseKernel and the conversion params/in_handle_or (also_handle caseKernel);
 * caseFuncGetName's f, whose doc does not say so, and caseKernelGetName's
 * kernel (a caseKernel itself) keep params/in_handle; caseFuncSetCache's f,
 * whose doc does not say so either, takes a caseKernel by the spec's
 * per-parameter override (also_accepts = "caseKernel").
 * Expect in fragments/params/in_handle_or.txt: a caseKernel instance passes
 * its pointer; anything else goes through _as_caseFunction, which refuses a
 * handle of another class; the stub and the docstring's forms name both.
 */
#ifndef CASE_HANDLE_CASTS_H
#define CASE_HANDLE_CASTS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

/** \brief A function handle. */
typedef struct caseFunc_st *caseFunction;
/** \brief A context-less kernel handle. */
typedef struct caseKern_st *caseKernel;

/**
 * \brief Launches a function or a kernel.
 *
 * A kernel ::caseKernel can be used by passing it to the API by casting to ::caseFunction.
 *
 * \param f    - Function ::caseFunction or Kernel ::caseKernel to launch
 * \param grid - Grid size
 */
caseResult caseLaunch(caseFunction f, unsigned int grid);

/**
 * \brief Occupancy of a function.
 *
 * Note that the API can also be used with a kernel by passing it to the API by
 * casting to ::caseFunction.
 *
 * \param blocks - Returned blocks
 * \param f      - Function to query
 */
caseResult caseOccupancy(int *blocks, caseFunction f);

/**
 * \brief The name of a function.
 *
 * \param name - Returned name
 * \param f    - Function to query
 */
caseResult caseFuncGetName(const char **name, caseFunction f);

/**
 * \brief The name of a kernel.
 *
 * \param name   - Returned name
 * \param kernel - Kernel to query
 */
caseResult caseKernelGetName(const char **name, caseKernel kernel);

/**
 * \brief Sets a function's cache preference.
 *
 * \param f      - Function to configure
 * \param config - Preference
 */
caseResult caseFuncSetCache(caseFunction f, int config);

#endif
