/* A stand-in for the NVIDIA driver's libnvidia-ml.so.1, for cubind.system's
 * tests without a GPU: two GPUs of fixed readings, NVML's statuses where the
 * real library gives them (a short buffer or list: NVML_ERROR_INSUFFICIENT_SIZE
 * with the needed count; a versioned struct of the wrong version:
 * NVML_ERROR_ARGUMENT_VERSION_MISMATCH; any call before nvmlInit:
 * NVML_ERROR_UNINITIALIZED), and what the tests count (fake_nvml_init_calls).
 * Built against the real nvml.h, so every struct has NVML's layout. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <nvml.h>

#define GPUS 2
struct fake_gpu {
  const char *name, *uuid, *bus_id;
  unsigned long long total, used, reserved;
  unsigned int gpu_util, mem_util, temperature, power_mw, limit_mw, clocks[4], max_clocks[4];
  unsigned int pids[3], npids, mig;
};
static struct fake_gpu gpus[GPUS] = {
    {"NVIDIA Fake H100", "GPU-01234567-89ab-cdef-0123-456789abcdef", "00000000:1B:00.0", 80ULL << 30, 1ULL << 30,
     512ULL << 20, 37, 12, 41, 123456, 700000, {1980, 1980, 2619, 1755}, {1980, 1980, 2619, 1755}, {101, 202, 303}, 3,
     NVML_DEVICE_MIG_DISABLE},
    {"NVIDIA Fake A100", "GPU-fedcba98-7654-3210-fedc-ba9876543210", "00000000:3D:00.0", 40ULL << 30, 2ULL << 30,
     256ULL << 20, 5, 1, 33, 60000, 400000, {210, 210, 1215, 585}, {1410, 1410, 1215, 1275}, {0}, 0,
     NVML_DEVICE_MIG_ENABLE},
};
static volatile int initialized;
int fake_nvml_init_calls;  /* read by the tests: nvmlInit_v2 called how many times */

#define DEVICE(d) ((struct fake_gpu *)(d))
#define READY() do { if (!initialized) return NVML_ERROR_UNINITIALIZED; } while (0)
#define VALID(d) do { READY(); if ((d) == NULL) return NVML_ERROR_INVALID_ARGUMENT; } while (0)

static nvmlReturn_t copy_string(char *out, unsigned int length, const char *s) {
  if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(s) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  memcpy(out, s, strlen(s) + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) {
  /* Not atomic on purpose: a caller initialising twice at once shows as 2. */
  int seen = fake_nvml_init_calls;
  usleep(2000);
  fake_nvml_init_calls = seen + 1;
  initialized = 1;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlShutdown(void) { initialized = 0; return NVML_SUCCESS; }
const char *nvmlErrorString(nvmlReturn_t result) {
  return result == NVML_ERROR_NOT_SUPPORTED ? "Not Supported" : result == NVML_SUCCESS ? "Success" : "Fake Error";
}
nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
  READY();
  return copy_string(version, length, "999.12.34");
}
nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length) {
  READY();
  return copy_string(version, length, "13.999.12.34");
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *v) { READY(); *v = 13000; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) { READY(); *count = GPUS; return NVML_SUCCESS; }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
  READY();
  if (index >= GPUS) return NVML_ERROR_INVALID_ARGUMENT;
  *device = (nvmlDevice_t)&gpus[index];
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device) {
  READY();
  for (int i = 0; i < GPUS; ++i)
    if (strcmp(uuid, gpus[i].uuid) == 0) { *device = (nvmlDevice_t)&gpus[i]; return NVML_SUCCESS; }
  return NVML_ERROR_NOT_FOUND;
}
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus_id, nvmlDevice_t *device) {
  READY();
  for (int i = 0; i < GPUS; ++i)
    if (strcasecmp(bus_id, gpus[i].bus_id) == 0) { *device = (nvmlDevice_t)&gpus[i]; return NVML_SUCCESS; }
  return NVML_ERROR_NOT_FOUND;
}
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *index) {
  VALID(d);
  *index = (unsigned int)(DEVICE(d) - gpus);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length) {
  VALID(d);
  return copy_string(name, length, DEVICE(d)->name);
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length) {
  VALID(d);
  return copy_string(uuid, length, DEVICE(d)->uuid);
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci) {
  VALID(d);
  memset(pci, 0, sizeof *pci);
  snprintf(pci->busId, sizeof pci->busId, "%s", DEVICE(d)->bus_id);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *memory) {
  VALID(d);
  if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  memory->total = DEVICE(d)->total;
  memory->reserved = DEVICE(d)->reserved;
  memory->used = DEVICE(d)->used;
  memory->free = DEVICE(d)->total - DEVICE(d)->used;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
  VALID(d);
  u->gpu = DEVICE(d)->gpu_util;
  u->memory = DEVICE(d)->mem_util;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t sensor, unsigned int *temp) {
  VALID(d);
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *temp = DEVICE(d)->temperature;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw) { VALID(d); *mw = DEVICE(d)->power_mw; return 0; }
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned int *mw) {
  VALID(d);
  *mw = DEVICE(d)->limit_mw;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int *mhz) {
  VALID(d);
  if ((unsigned)type >= 4) return NVML_ERROR_INVALID_ARGUMENT;
  *mhz = DEVICE(d)->clocks[type];
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, nvmlClockType_t type, unsigned int *mhz) {
  VALID(d);
  if ((unsigned)type >= 4) return NVML_ERROR_INVALID_ARGUMENT;
  *mhz = DEVICE(d)->max_clocks[type];
  return NVML_SUCCESS;
}
static nvmlReturn_t processes(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos, int graphics) {
  VALID(d);
  unsigned int n = graphics ? 0 : DEVICE(d)->npids;
  if (infos == NULL || *count < n) {
    unsigned int asked = *count;
    *count = n;
    return asked < n ? NVML_ERROR_INSUFFICIENT_SIZE : NVML_SUCCESS;
  }
  for (unsigned int i = 0; i < n; ++i) {
    memset(&infos[i], 0, sizeof infos[i]);
    infos[i].pid = DEVICE(d)->pids[i];
    /* The second process's memory is not available, as under WDDM. */
    infos[i].usedGpuMemory = i == 1 ? (unsigned long long)NVML_VALUE_NOT_AVAILABLE : (i + 1) * (100ULL << 20);
  }
  *count = n;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos) {
  return processes(d, count, infos, 0);
}
nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos) {
  return processes(d, count, infos, 1);
}
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *current, unsigned int *pending) {
  VALID(d);
  if (DEVICE(d) == &gpus[0]) return NVML_ERROR_NOT_SUPPORTED;  /* a GPU without MIG */
  *current = *pending = DEVICE(d)->mig;
  return NVML_SUCCESS;
}
