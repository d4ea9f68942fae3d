/* Golden case "outputs": the conversions of what a call writes back.
 *
 * Expect in model.json (the conversion of each parameter) and in fragments/:
 *   caseGetProps     a struct* documented as returned -> record_out
 *                    (params/record_out: a new caseProps object is returned;
 *                    record_class caseProps although C names it caseProps_v2)
 *   caseMapMemory    a void** documented as returned -> out_address
 *                    (params/out_address: an int address)
 *   caseGetName      a char* documented as an output with a `length`
 *                    parameter -> out_buffer counted by length (bytes up to
 *                    the first NUL; a negative length is a ValueError)
 *   caseGetScale     float* -> params/out_float (stub: float)
 *   caseGetMode      an enum* -> params/out_enum (an enum member)
 *   caseGetCount     int* -> params/out_value (stub: int)
 *   caseGetNodes     spec.toml: nodes and edges are inout_array counted by
 *                    numNodes, which becomes inout_count: the capacity is an
 *                    input, the count an output; nodes come back as a list of
 *                    handles (out_element_handle), edges as records
 *                    (out_element_record), both NULL when the capacity is 0
 *   caseGetModes     the same for enum items (out_element_enum: members back)
 *                    and int items (out_element_value), counted by count;
 *                    both counts are the last inputs: py_default "0" (left
 *                    out, the call only counts, as the classic bindings)
 *   caseGetLevels    an in/out count followed by an input (`flags`): no
 *                    default, since Python allows none before a required one
 *   caseSwapMode     spec.toml: mode is inout_scalar -> params/inout_enum
 *                    (the mode taken as an input, the previous one returned)
 */
#ifndef CASE_OUTPUTS_H
#define CASE_OUTPUTS_H

typedef __SIZE_TYPE__ size_t;

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef enum { CASE_MODE_A = 0, CASE_MODE_B = 1 } caseMode;

typedef struct caseProps_st {
  int major;
  int minor;
} caseProps_v2;
typedef caseProps_v2 caseProps;

/**
 * \brief Returns the properties.
 * \param props - Returned properties
 */
caseResult caseGetProps(caseProps *props);

/**
 * \brief Maps memory.
 * \param pp - Returned host address
 * \param bytes - Size
 */
caseResult caseMapMemory(void **pp, size_t bytes);

/**
 * \brief Returns the device name.
 * \param name - Returned name
 * \param length - Capacity of name in bytes
 */
caseResult caseGetName(char *name, int length);

/**
 * \brief Returns the scale.
 * \param scale - Returned scale
 */
caseResult caseGetScale(float *scale);

/**
 * \brief Returns the mode.
 * \param mode - Returned mode
 */
caseResult caseGetMode(caseMode *mode);

/**
 * \brief Returns the count.
 * \param count - Returned count
 */
caseResult caseGetCount(int *count);

typedef struct caseNode_st *caseNode;
typedef struct caseEdge_st {
  int kind;
} caseEdge;

caseResult caseGetNodes(caseNode *nodes, caseEdge *edges, size_t *numNodes);
caseResult caseGetModes(caseMode *modes, int *levels, unsigned int *count);
caseResult caseGetLevels(int *levels, size_t *numLevels, unsigned int flags);

/**
 * \brief Sets the mode to *mode and writes the previous one there.
 * \param mode - Pointer to the mode to swap with the current one
 */
caseResult caseSwapMode(caseMode *mode);

#endif
