/* fuzz_lsan.h — LSAN_DISABLE() / LSAN_ENABLE(): pause LeakSanitizer around allocations
 * that are not ours to free (MPI_Init, HDF5's library state), for the fuzz targets built
 * with -fsanitize=address; no-ops in a build without ASan. */
#ifndef GP_FUZZ_LSAN_H
#define GP_FUZZ_LSAN_H
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/lsan_interface.h>
#define LSAN_DISABLE() __lsan_disable()
#define LSAN_ENABLE() __lsan_enable()
#endif
#endif
#ifndef LSAN_DISABLE
#define LSAN_DISABLE() ((void)0)
#define LSAN_ENABLE() ((void)0)
#endif
#endif /* GP_FUZZ_LSAN_H */
