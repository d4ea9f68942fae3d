/* Golden case "attributes": values typed by an attribute enum.
 *
 * Expect in model.json (attribute_tables, each parameter's conversion) and in
 * fragments/:
 *   attribute_tables  caseAttr's members resolved from spec.toml's
 *                     attribute_types: a handle (caseCtx), an enum
 *                     (caseKind), a typedef'd integer (caseU64), a builtin
 *                     (unsigned int), a struct (caseTokens), an address
 *                     (void*) and an array of int; sorted by value
 *   attribute_table.pyx  one union of the value types, the size, value and
 *                     store functions; the address and the array cannot be set
 *   caseGetAttribute  data: attribute_out of `attribute` -> params/attribute_out
 *                     (dropped from the inputs, returned typed; stub: the
 *                     union of the value types)
 *   caseSetAttribute  value: attribute_in -> params/attribute_in (stub: the
 *                     settable types | Buffer)
 *   caseRangeGetAttribute  data: attribute_out sized by dataSize ->
 *                     params/attribute_out_sized (arrays fill dataSize bytes)
 *   caseRangeGetAttributes  data: a value per attribute of the array
 *                     `attributes`, each in the bytes dataSizes gives for it ->
 *                     params/attribute_out_array_sized (a list comes back)
 *   out_element_address  the void* member's value comes back as an int
 */
#ifndef CASE_ATTRIBUTES_H
#define CASE_ATTRIBUTES_H

typedef __SIZE_TYPE__ size_t;
typedef unsigned long long caseU64;

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef enum { CASE_KIND_HOST = 1, CASE_KIND_DEVICE = 2 } caseKind;
typedef struct caseCtx_st *caseCtx;
typedef struct caseTokens_st {
    unsigned long long token;
    unsigned int space;
} caseTokens;

typedef enum caseAttr_enum {
    CASE_ATTR_CONTEXT = 1,
    CASE_ATTR_KIND = 2,
    CASE_ATTR_SIZE = 3,
    CASE_ATTR_FLAGS = 4,
    CASE_ATTR_TOKENS = 5,
    CASE_ATTR_HOST_POINTER = 6,
    CASE_ATTR_DEVICES = 7
} caseAttr;

/** Returns in *data the value of attribute for ptr. */
caseResult caseGetAttribute(void *data, caseAttr attribute, unsigned long long ptr);
/** Sets attribute of ptr to the value at value. */
caseResult caseSetAttribute(const void *value, caseAttr attribute, unsigned long long ptr);
/** Returns in data (dataSize bytes) the value of attribute over [ptr, ptr + count). */
caseResult caseRangeGetAttribute(void *data, size_t dataSize, caseAttr attribute, unsigned long long ptr, size_t count);
/** Returns in data[i] (dataSizes[i] bytes) the value of attributes[i] over [ptr, ptr + count). */
caseResult caseRangeGetAttributes(void **data, size_t *dataSizes, caseAttr *attributes, size_t numAttributes,
                                  unsigned long long ptr, size_t count);

#endif
