/* test_backend_table.c — both backend tables (gpuprim/kernels.h's gp_backend) are filled: every
 * mandatory entry of the CPU table and of the CUDA table is non-NULL, the optional ones are
 * named here, and the list below names every entry of the struct (a new entry that is not
 * added here fails the layout check). The CUDA table is read through its private accessor
 * (kernels/backend_table.h), so no device is needed; a build without CUDA has no CUDA table
 * and checks the CPU one alone. No MPI, no GPU. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_table.h"
#include "gpuprim/kernels.h"
#include "test_check.h"

/* Every entry of gp_backend, by group (kernels.h's order): X(entry, optional). Optional
 * entries may be NULL in a table (kernels.h says what NULL means for each). */
#define GP_BACKEND_ENTRIES(X)                                                                \
    X(alloc, 0) X(free, 0) X(host_alloc, 0) X(host_free, 0) X(mem_info, 0)                   \
    X(upload, 0) X(download, 0) X(upload_async, 0) X(upload_wait, 0) X(download_async, 0)   \
    X(download_wait, 0) X(copy, 0) X(synchronize, 0)                                         \
    X(stats, 0) X(trap_x, 0) X(trap_fn, 0) X(exact_sum, 0)                                   \
    X(cumsum, 0) X(cumint, 0)                                                                \
    X(to_keys, 0) X(from_keys, 0) X(sort, 0) X(iota, 0) X(sort_values, 0) X(sort_spare, 1)   \
    X(merge_split, 0) X(merge_path, 0)                                                       \
    X(ipc_get, 0) X(ipc_open, 0) X(ipc_close, 0)                                             \
    X(hist, 0) X(finite_range, 0) X(radix_hist, 0) X(runs, 0)                               \
    X(last_error, 0)

/* One field of gp_backend: its place, for the layout check. */
typedef struct field {
    const char *name;
    size_t off, size;
} field;

#define FIELD(f, opt) {#f, offsetof(gp_backend, f), sizeof(((gp_backend *)0)->f)},
static const field g_fields[] = {
    {"name", offsetof(gp_backend, name), sizeof(((gp_backend *)0)->name)},
    {"caps", offsetof(gp_backend, caps), sizeof(((gp_backend *)0)->caps)},
    GP_BACKEND_ENTRIES(FIELD)
};
#undef FIELD
#define NFIELDS (sizeof g_fields / sizeof g_fields[0])

static int by_offset(const void *a, const void *b)
{
    const size_t x = ((const field *)a)->off, y = ((const field *)b)->off;
    return (x > y) - (x < y);
}

/* The fields listed above cover gp_backend: sorted by offset, each starts where the one
 * before ends (give or take the padding before a pointer), and the last ends the struct. An
 * entry added to the struct but not to GP_BACKEND_ENTRIES leaves a gap of a pointer. */
static void check_layout(void)
{
    field f[NFIELDS];
    memcpy(f, g_fields, sizeof f);
    qsort(f, NFIELDS, sizeof f[0], by_offset);
    size_t end = 0;
    for (size_t i = 0; i < NFIELDS; i++) {
        CHECK(f[i].off >= end && f[i].off - end < sizeof(void *),
              "%s at offset %zu, the fields before it end at %zu: an entry of gp_backend is "
              "missing from GP_BACKEND_ENTRIES", f[i].name, f[i].off, end);
        end = f[i].off + f[i].size;
    }
    CHECK(sizeof(gp_backend) >= end && sizeof(gp_backend) - end < sizeof(void *),
          "gp_backend has %zu bytes, the listed fields end at %zu", sizeof(gp_backend), end);
}

/* Every mandatory entry of *b non-NULL; the optional ones reported as filled or not. */
static void check_table(const char *which, const gp_backend *b)
{
    CTX("%s table", which);
    CHECK(b->name && strcmp(b->name, which) == 0, "name '%s'", b->name ? b->name : "(NULL)");
#define ENTRY(f, opt)                                                                        \
    if (opt) printf("%s: optional entry %s: %s\n", which, #f, b->f ? "filled" : "NULL");     \
    else CHECK(b->f != NULL, "mandatory entry %s is NULL", #f);
    GP_BACKEND_ENTRIES(ENTRY)
#undef ENTRY
    CTX("%s", "");
}

int main(void)
{
    check_layout();

    const gp_backend *cpu = gp_backend_cpu();
    CHECK(cpu != NULL && cpu == gp_backend_cpu(), "one static CPU table");
    if (cpu) {
        check_table("cpu", cpu);
        CHECK(cpu->caps == GP_CAP_HOST_MEMORY, "cpu caps 0x%x", cpu->caps);
        CHECK(cpu->sort_spare != NULL, "the CPU sort takes spares (sort_spare filled)");
        CHECK(cpu->last_error() != NULL, "cpu last_error() callable");
    }

    const gp_backend *cuda = gp_backend_cuda_table();
    if (!cuda) {
        char why[160];
        CHECK(gp_backend_cuda(0, why, sizeof why) == NULL, "no CUDA table, yet a CUDA backend");
        printf("no CUDA table in this build (%s): the CPU table alone\n", why);
    } else {
        check_table("cuda", cuda);
        CHECK(cuda->caps == GP_CAP_IPC, "cuda caps 0x%x", cuda->caps);
        CHECK(cuda->sort_spare == NULL, "the CUDA sort sorts in place (sort_spare NULL)");
    }
    return gp_check_done("test_backend_table");
}
