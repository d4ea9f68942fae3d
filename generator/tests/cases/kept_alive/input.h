/* Golden case "kept_alive": what a call keeps pointing at after it returns.
 *
 * caseLinkCreate's option values may be buffers the library writes to until
 * caseLinkDestroy (as cuLinkCreate's log buffers). spec.toml: optionValues
 * has kept_until = "caseLinkDestroy".
 *
 * Expect in model.json: optionValues with kept_until and kept_by = "stateOut"
 * (the output handle owning them); caseLinkDestroy with releases_kept =
 * "state". In fragments/function.pyx.txt: caseLinkCreate stores the array's
 * keep list in _kept_alive under (b"caseLink", int(handle)) after a success
 * only; caseLinkDestroy pops it after its call, whatever the status.
 * caseLinkAdd (no kept_until) keeps nothing.
 */
#ifndef CASE_KEPT_ALIVE_H
#define CASE_KEPT_ALIVE_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef enum { CASE_OPT_LOG = 0, CASE_OPT_LOG_SIZE = 1 } caseOption;
typedef struct caseLink_st *caseLink;

/**
 * \brief Creates a link state.
 * \param numOptions - Size of the option arrays
 * \param options - Options
 * \param optionValues - Option values
 * \param stateOut - Returned link state
 */
caseResult caseLinkCreate(unsigned int numOptions, caseOption *options, void **optionValues, caseLink *stateOut);

/**
 * \brief Adds an input.
 * \param state - Link state
 * \param numOptions - Size of the option arrays
 * \param options - Options
 * \param optionValues - Option values
 */
caseResult caseLinkAdd(caseLink state, unsigned int numOptions, caseOption *options, void **optionValues);

/**
 * \brief Destroys a link state.
 * \param state - Link state
 */
caseResult caseLinkDestroy(caseLink state);

#endif
