/* Golden case "attribute_strings": attribute values that are strings, and a
 * size the call reads through a pointer (the driver's cuCoredump* family).
 *
 * Expect in model.json and in fragments/:
 *   attribute_tables  caseSetting's members from spec.toml: bool, unsigned
 *                     int, and two strings (char[64]: string_size 64)
 *   attribute_table.pyx  the union holds `char v2[64]`; the size function
 *                     answers 64 for a string; the value function reads the
 *                     bytes before the NUL (fixed_string_of); the store
 *                     function writes a string (fixed_string_into) before it
 *                     would take a buffer as the raw value
 *   caseGetSetting    value: attribute_out; size: attribute_size (hidden from
 *                     Python, set to the value's size: params/attribute_size)
 *   caseSetSetting    value: attribute_in; size: attribute_size
 *   out_element_string / in_element_string  the strings' item and stubs
 */
#ifndef CASE_ATTRIBUTE_STRINGS_H
#define CASE_ATTRIBUTE_STRINGS_H

typedef __SIZE_TYPE__ size_t;

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;

typedef enum caseSetting_enum {
    CASE_SETTING_ENABLE = 1,
    CASE_SETTING_FLAGS = 2,
    CASE_SETTING_FILE = 3,
    CASE_SETTING_PIPE = 4
} caseSetting;

/** Returns in *value the setting; *size is the size of the storage at value. */
caseResult caseGetSetting(caseSetting attrib, void *value, size_t *size);
/** Sets the setting from the *size bytes at value. */
caseResult caseSetSetting(caseSetting attrib, void *value, size_t *size);

#endif
