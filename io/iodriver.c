/* iodriver.c — which I/O driver moves a file's data (gpuprim/iodriver.h: gp_io_mode): the system read
 * once into a gp_io_env, then a pure function decides. */
#include "gpuprim/iodriver.h"

#include <string.h>
#include <sys/vfs.h>

const char *gp_io_mode_name(gp_io_mode m)
{
    switch (m) {
    case GP_IO_AUTO: return "auto";
    case GP_IO_POSIX: return "posix";
    case GP_IO_MPIIO: return "mpiio";
    default: return "?";
    }
}

int gp_io_mode_parse(const char *s, gp_io_mode *m)
{
    static const gp_io_mode all[3] = {GP_IO_AUTO, GP_IO_POSIX, GP_IO_MPIIO};
    for (int i = 0; s && i < 3; i++)
        if (strcmp(s, gp_io_mode_name(all[i])) == 0) {
            *m = all[i];
            return 0;
        }
    return -1;
}

void gp_io_env_of(const char *path, gp_io_env *env)
{
    struct statfs st;
    memset(env, 0, sizeof *env);
    if (path && statfs(path, &st) == 0) {
        env->have_fs = 1;
        /* f_type is a signed word on some ABIs: the magic is its low 32 bits */
        env->fs_magic = (unsigned long)((unsigned long long)st.f_type & 0xffffffffull);
    }
}

/* The statfs magic numbers of the parallel file systems (the kernel's and the vendors'
 * client modules). */
static const struct {
    unsigned long magic;
    const char *name;
} g_parallel_fs[] = {
    {0x0bd00bd0ul, "lustre"},   /* LUSTRE_SUPER_MAGIC */
    {0x47504653ul, "gpfs"},     /* "GPFS": IBM Spectrum Scale */
    {0x19830326ul, "beegfs"},   /* BeeGFS (FhGFS) */
    {0x20030528ul, "orangefs"}, /* PVFS2_SUPER_MAGIC: OrangeFS / PVFS */
    {0xaad7aaeaul, "panfs"},    /* Panasas PanFS */
};

const char *gp_io_parallel_fs(unsigned long fs_magic)
{
    for (size_t i = 0; i < sizeof g_parallel_fs / sizeof g_parallel_fs[0]; i++)
        if (g_parallel_fs[i].magic == (fs_magic & 0xffffffffu)) return g_parallel_fs[i].name;
    return NULL;
}

gp_io_mode gp_io_choose(gp_io_mode requested, const gp_io_env *env)
{
    if (requested == GP_IO_POSIX || requested == GP_IO_MPIIO) return requested;
    return env && env->have_fs && gp_io_parallel_fs(env->fs_magic) ? GP_IO_MPIIO : GP_IO_POSIX;
}
