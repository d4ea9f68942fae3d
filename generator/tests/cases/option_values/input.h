/* Golden case "option_values": a void* array carrying the values of an
 * array of options (cuLinkCreate's optionValues beside its CUjit_option
 * options), each value converted as its option's doc comment says.
 *
 * spec.toml names the enum in [option_types] (with one member the header
 * leaves undocumented) and the wording (conventions.option_type_wording).
 * Expect in model.json: option_tables with one kind per member (unsigned,
 * signed, float, enum with the enum named by the tag caseFallback_enum
 * resolved to caseFallback, buffer, none, address, and CASE_OPT_SECRET from
 * the spec), CASE_OPT_COUNT absent (no type); optionValues of both functions
 * with role option_values linked to `options` by their shared count. In
 * fragments/: option_table.pyx's dispatch and params/option_values.
 */
#ifndef CASE_OPTION_VALUES_H
#define CASE_OPTION_VALUES_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef enum caseFallback_enum { CASE_PREFER_PTX = 0, CASE_PREFER_BINARY = 1 } caseFallback;
typedef enum {
  /** Registers.\n Option type: unsigned int\n Applies to: all */
  CASE_OPT_REGISTERS = 0,
  /** A flag.\n Option type: int\n */
  CASE_OPT_FLAG = 1,
  /** Written with the time.\n Option type: float\n */
  CASE_OPT_TIME = 2,
  /** A log.\n Option type: char *\n */
  CASE_OPT_LOG = 3,
  /** The fallback.\n Option type: unsigned int for enumerated type ::caseFallback_enum\n */
  CASE_OPT_FALLBACK = 4,
  /** From the context.\n Option type: No option value needed\n */
  CASE_OPT_CONTEXT = 5,
  /** Names.\n Option type: const char **\n */
  CASE_OPT_NAMES = 6,
  /** Undocumented. */
  CASE_OPT_SECRET = 7,
  CASE_OPT_COUNT
} caseOption;
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
 * \brief Loads with options.
 * \param image - Code
 * \param numOptions - Size of the option arrays
 * \param options - Options
 * \param optionValues - Option values
 */
caseResult caseLoad(const void *image, unsigned int numOptions, caseOption *options, void **optionValues);

#endif
