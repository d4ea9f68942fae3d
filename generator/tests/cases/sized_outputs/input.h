/* Golden case "sized_outputs": outputs whose size the spec gives, as the
 * header says it only in words (cuDeviceGetLuid, cuGLGetDevices,
 * cuLogsDumpToMemory).
 *
 * Expect in model.json:
 *   caseGetLuid       luid: role out_bytes, conversion params/out_bytes with
 *                     fixed_count 8 (spec size = 8)
 *   caseGetDevices    devices: role out_array_sized, count_param capacity,
 *                     written_param count (an out_scalar), conversion
 *                     params/out_array_sized with a handle element
 *   caseDumpToMemory  iterator: inout_handle, optional (its doc says
 *                     "Optional"), conversion params/inout_handle_optional,
 *                     an output; buffer: a written buffer counted by size;
 *                     size: inout_count
 * and in fragments/function.pyx.txt caseGetLuid returning `<bytes>..[:8]`,
 * caseGetDevices returning a list of at most min(capacity, count) handles,
 * caseDumpToMemory taking (iterator, buffer, size, flags) and returning the
 * iterator and the size written.
 */
#ifndef CASE_SIZED_OUTPUTS_H
#define CASE_SIZED_OUTPUTS_H

typedef enum { CASE_SUCCESS = 0, CASE_ERROR = 1 } caseResult;
typedef int caseDevice;
typedef unsigned int caseLogIterator;

/**
 * \brief Returns the device's LUID.
 * \param luid - Returned 8-byte LUID
 * \param mask - Returned node mask
 * \param dev  - Device
 */
caseResult caseGetLuid(char *luid, unsigned int *mask, caseDevice dev);

/**
 * \brief Returns the devices of the current context.
 * \param count    - Returned number of devices
 * \param devices  - Returned devices
 * \param capacity - The size of the array devices
 */
caseResult caseGetDevices(unsigned int *count, caseDevice *devices, unsigned int capacity);

/**
 * \brief Dumps the logs into a buffer.
 * \param iterator - Optional auto-advancing iterator. NULL dumps all logs.
 * \param buffer   - Pointer to dump logs
 * \param size     - See description
 * \param flags    - Reserved
 */
caseResult caseDumpToMemory(caseLogIterator *iterator, char *buffer, unsigned long *size, unsigned int flags);

#endif
