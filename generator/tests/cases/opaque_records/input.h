/* Golden case "opaque_records": a typedef of a struct defined nowhere, used
 * by address (UCX's `typedef struct ucp_config ucp_config_t;`).
 *
 * Expect:
 *   - caseConfig_t a record of no fields, not complete: the C layer declares
 *     it (`ctypedef struct caseConfig_t: pass`), the Python layer has no
 *     class for it.
 *   - caseConfigModify's `config` (caseConfig_t *) an int address
 *     (params/in_opaque, cast to caseConfig_t* for the call);
 *     caseConfigRead's `config_p` (caseConfig_t **, [out]) its address
 *     returned as an int (params/out_address).
 *   - caseParams_t.config (a pointer to it) an address field (fields/address).
 *   - caseRelease's `const caseWorker worker`, a handle taken by value under
 *     const: its local is declared without the const (params/in_handle).
 */
#ifndef CASE_OPAQUE_RECORDS_H
#define CASE_OPAQUE_RECORDS_H

typedef enum { CASE_OK = 0, CASE_ERROR = 1 } caseStatus;

typedef struct caseConfig caseConfig_t;
typedef struct caseWorker_st *caseWorker;

typedef struct {
    int flags;
    const caseConfig_t *config;
} caseParams_t;

/**
 * Reads the configuration.
 * \param[out] config_p Returned configuration.
 */
caseStatus caseConfigRead(caseConfig_t **config_p);
/** Sets one value. */
caseStatus caseConfigModify(caseConfig_t *config, const char *name, const char *value);
/** Starts from the parameters. */
caseStatus caseStart(const caseParams_t *params);
/** Releases a worker. */
caseStatus caseRelease(const caseWorker worker);

#endif
