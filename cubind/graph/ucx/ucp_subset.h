/* The part of UCX's UCP API (ucp/api/ucp.h, UCX 1.10 and later) that
 * cubind.graph's data path calls, declared here so that cubind builds
 * without UCX's headers, and loaded at run time (dlopen) from the libucx
 * wheel that ucxx loads too. The layouts are UCP's, checked field by field
 * against the real header by tests/graph/test_ucx_pump.py where libucx is
 * installed. Only what the data path sets is read by UCX: each struct's
 * field mask says which fields are. */
#ifndef CUBIND_UCP_SUBSET_H
#define CUBIND_UCP_SUBSET_H

#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef int8_t cubind_ucs_status_t; /* a packed enum in ucs/type/status.h: one byte, negative for errors */
typedef void *cubind_ucs_status_ptr_t;
typedef struct ucp_context *cubind_ucp_context_h;
typedef struct ucp_worker *cubind_ucp_worker_h;
typedef struct ucp_ep *cubind_ucp_ep_h;
typedef struct ucp_address cubind_ucp_address_t;
typedef uint64_t cubind_ucp_tag_t;
typedef void *cubind_ucp_config_ptr;

#define CUBIND_UCS_OK 0
#define CUBIND_UCS_INPROGRESS 1
#define CUBIND_UCS_ERR_CANCELED (-16)
#define CUBIND_UCS_ERR_BUSY (-15)
#define CUBIND_UCS_ERR_LAST (-100)
#define CUBIND_UCS_PTR_IS_ERR(_ptr) (((uintptr_t)(_ptr)) >= ((uintptr_t)CUBIND_UCS_ERR_LAST))
#define CUBIND_UCS_PTR_IS_PTR(_ptr) (((uintptr_t)(_ptr) - 1) < ((uintptr_t)CUBIND_UCS_ERR_LAST - 1))
#define CUBIND_UCS_PTR_STATUS(_ptr) ((cubind_ucs_status_t)(intptr_t)(_ptr))

/* ucp_params_t's first fields (UCP_PARAM_FIELD_FEATURES) */
typedef struct {
    uint64_t field_mask;
    uint64_t features;
    size_t request_size;
    void *request_init;
    void *request_cleanup;
    uint64_t tag_sender_mask;
    int mt_workers_shared;
    size_t estimated_num_eps;
    size_t estimated_num_ppn;
    const char *name;
    size_t node_local_id;
} cubind_ucp_params_t;
#define CUBIND_UCP_PARAM_FIELD_FEATURES (1ull << 0)
#define CUBIND_UCP_FEATURE_TAG (1ull << 0)
#define CUBIND_UCP_FEATURE_WAKEUP (1ull << 4)

/* ucp_worker_params_t (UCP_WORKER_PARAM_FIELD_THREAD_MODE); cpu_mask is ucs_cpu_set_t, 1024 bits */
typedef struct {
    uint64_t field_mask;
    int thread_mode;
    unsigned long cpu_mask[1024 / (8 * sizeof(unsigned long))];
    unsigned events;
    void *user_data;
    int event_fd;
    uint64_t flags;
    const char *name;
    size_t am_alignment;
    uint64_t client_id;
} cubind_ucp_worker_params_t;
#define CUBIND_UCP_WORKER_PARAM_FIELD_THREAD_MODE (1ull << 0)
#define CUBIND_UCS_THREAD_MODE_SERIALIZED 1

/* ucp_ep_params_t's first fields (remote address, error handling mode) */
typedef struct {
    uint64_t field_mask;
    const cubind_ucp_address_t *address;
    int err_mode;
    void *err_handler_cb;
    void *err_handler_arg;
    void *user_data;
    unsigned flags;
    char rest[512]; /* sockaddrs, conn_request, name: not set */
} cubind_ucp_ep_params_t;
#define CUBIND_UCP_EP_PARAM_FIELD_REMOTE_ADDRESS (1ull << 0)
#define CUBIND_UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE (1ull << 1)
#define CUBIND_UCP_ERR_HANDLING_MODE_NONE 0
#define CUBIND_UCP_ERR_HANDLING_MODE_PEER 1
#define CUBIND_UCP_EP_CLOSE_FLAG_FORCE (1u << 0)

/* ucp_request_param_t */
typedef struct {
    uint32_t op_attr_mask;
    uint32_t flags;
    void *request;
    void *cb;
    uint64_t datatype;
    void *user_data;
    void *reply_buffer;
    int memory_type;
    void *recv_info;
    void *memh;
} cubind_ucp_request_param_t;
#define CUBIND_UCP_OP_ATTR_FIELD_FLAGS (1u << 4)
#define CUBIND_UCP_OP_ATTR_FIELD_MEMORY_TYPE (1u << 6)
#define CUBIND_UCP_OP_ATTR_FLAG_NO_IMM_CMPL (1u << 16)
#define CUBIND_UCS_MEMORY_TYPE_HOST 0
#define CUBIND_UCS_MEMORY_TYPE_CUDA 1

typedef struct {
    cubind_ucp_tag_t sender_tag;
    size_t length;
} cubind_ucp_tag_recv_info_t;

/* The functions, from the library ucxx loaded. */
typedef struct {
    cubind_ucs_status_t (*config_read)(const char *, const char *, cubind_ucp_config_ptr *);
    void (*config_release)(cubind_ucp_config_ptr);
    cubind_ucs_status_t (*config_modify)(cubind_ucp_config_ptr, const char *, const char *);
    cubind_ucs_status_t (*init_version)(unsigned, unsigned, const cubind_ucp_params_t *, cubind_ucp_config_ptr, cubind_ucp_context_h *);
    void (*cleanup)(cubind_ucp_context_h);
    cubind_ucs_status_t (*worker_create)(cubind_ucp_context_h, const cubind_ucp_worker_params_t *, cubind_ucp_worker_h *);
    void (*worker_destroy)(cubind_ucp_worker_h);
    cubind_ucs_status_t (*worker_get_address)(cubind_ucp_worker_h, cubind_ucp_address_t **, size_t *);
    void (*worker_release_address)(cubind_ucp_worker_h, cubind_ucp_address_t *);
    unsigned (*worker_progress)(cubind_ucp_worker_h);
    cubind_ucs_status_t (*worker_get_efd)(cubind_ucp_worker_h, int *);
    cubind_ucs_status_t (*worker_arm)(cubind_ucp_worker_h);
    cubind_ucs_status_t (*worker_signal)(cubind_ucp_worker_h);
    cubind_ucs_status_t (*ep_create)(cubind_ucp_worker_h, const cubind_ucp_ep_params_t *, cubind_ucp_ep_h *);
    cubind_ucs_status_ptr_t (*ep_close_nbx)(cubind_ucp_ep_h, const cubind_ucp_request_param_t *);
    cubind_ucs_status_ptr_t (*tag_send_nbx)(cubind_ucp_ep_h, const void *, size_t, cubind_ucp_tag_t, const cubind_ucp_request_param_t *);
    cubind_ucs_status_ptr_t (*tag_recv_nbx)(cubind_ucp_worker_h, void *, size_t, cubind_ucp_tag_t, cubind_ucp_tag_t,
                                     const cubind_ucp_request_param_t *);
    cubind_ucs_status_t (*tag_recv_request_test)(void *, cubind_ucp_tag_recv_info_t *);
    cubind_ucs_status_t (*request_check_status)(void *);
    void (*request_cancel)(cubind_ucp_worker_h, void *);
    void (*request_free)(void *);
    const char *(*status_string)(cubind_ucs_status_t);
} cubind_ucp_api_t;

static cubind_ucp_api_t cubind_ucp;

/* Loads ``ucp`` (libucp's path) and ``ucs`` (libucs's, for status strings);
 * 0, or -1 with ``error`` saying what is missing. */
static int cubind_ucp_load(const char *ucp, const char *ucs, char *error, size_t size) {
    void *lib = dlopen(ucp, RTLD_NOW | RTLD_GLOBAL);
    void *slib = lib == NULL ? NULL : dlopen(ucs, RTLD_NOW | RTLD_GLOBAL);
    if (lib == NULL || slib == NULL) {
        snprintf(error, size, "%s", dlerror());
        return -1;
    }
#define CUBIND_UCP_SYM(_lib, _field, _name)                                \
    do {                                                                   \
        *(void **)&cubind_ucp._field = dlsym(_lib, _name);                 \
        if (cubind_ucp._field == NULL) {                                   \
            snprintf(error, size, "%s has no %s", ucp, _name);             \
            return -1;                                                     \
        }                                                                  \
    } while (0)
    CUBIND_UCP_SYM(lib, config_read, "ucp_config_read");
    CUBIND_UCP_SYM(lib, config_release, "ucp_config_release");
    CUBIND_UCP_SYM(lib, config_modify, "ucp_config_modify");
    CUBIND_UCP_SYM(lib, init_version, "ucp_init_version");
    CUBIND_UCP_SYM(lib, cleanup, "ucp_cleanup");
    CUBIND_UCP_SYM(lib, worker_create, "ucp_worker_create");
    CUBIND_UCP_SYM(lib, worker_destroy, "ucp_worker_destroy");
    CUBIND_UCP_SYM(lib, worker_get_address, "ucp_worker_get_address");
    CUBIND_UCP_SYM(lib, worker_release_address, "ucp_worker_release_address");
    CUBIND_UCP_SYM(lib, worker_progress, "ucp_worker_progress");
    CUBIND_UCP_SYM(lib, worker_get_efd, "ucp_worker_get_efd");
    CUBIND_UCP_SYM(lib, worker_arm, "ucp_worker_arm");
    CUBIND_UCP_SYM(lib, worker_signal, "ucp_worker_signal");
    CUBIND_UCP_SYM(lib, ep_create, "ucp_ep_create");
    CUBIND_UCP_SYM(lib, ep_close_nbx, "ucp_ep_close_nbx");
    CUBIND_UCP_SYM(lib, tag_send_nbx, "ucp_tag_send_nbx");
    CUBIND_UCP_SYM(lib, tag_recv_nbx, "ucp_tag_recv_nbx");
    CUBIND_UCP_SYM(lib, tag_recv_request_test, "ucp_tag_recv_request_test");
    CUBIND_UCP_SYM(lib, request_check_status, "ucp_request_check_status");
    CUBIND_UCP_SYM(lib, request_cancel, "ucp_request_cancel");
    CUBIND_UCP_SYM(lib, request_free, "ucp_request_free");
    CUBIND_UCP_SYM(slib, status_string, "ucs_status_string");
#undef CUBIND_UCP_SYM
    return 0;
}

#endif
