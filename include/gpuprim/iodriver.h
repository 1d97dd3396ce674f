/* iodriver.h — the I/O driver of a file's data transfers (--io): the modes, and the choice
 * of auto by the file system (io/iodriver.c). Needs neither HDF5 nor MPI. */
#ifndef GP_IODRIVER_H
#define GP_IODRIVER_H

/* The driver of a file's data transfers (--io): GP_IO_AUTO is resolved per file by
 * gp_io_choose; GP_IO_POSIX (each rank's own open, pread / pwrite) and GP_IO_MPIIO
 * (parallel HDF5, collective transfers) as h5io.h describes them. */
typedef enum gp_io_mode { GP_IO_AUTO = 0, GP_IO_POSIX = 1, GP_IO_MPIIO = 2 } gp_io_mode;

/* "auto", "posix", "mpiio" ("?" for another value). Not collective. */
const char *gp_io_mode_name(gp_io_mode m);

/* Parses "auto", "posix" or "mpiio" into *m; returns 0, or -1 (*m unchanged). */
int gp_io_mode_parse(const char *s, gp_io_mode *m);

/* What gp_io_choose looks at, read once from the system (gp_io_env_of). */
typedef struct gp_io_env {
    int have_fs;            /* statfs of the path succeeded */
    unsigned long fs_magic; /* its f_type (the file system's magic number) */
} gp_io_env;

/* statfs(path) into *env (path: an input file, or the folder of an output). Not collective. */
void gp_io_env_of(const char *path, gp_io_env *env);

/* The name of a parallel file system by its statfs magic ("lustre", "gpfs", "beegfs",
 * "orangefs", "panfs"), else NULL. Pure. */
const char *gp_io_parallel_fs(unsigned long fs_magic);

/* The driver for a file: `requested` unless it is GP_IO_AUTO; auto gives GP_IO_MPIIO on a
 * parallel file system (gp_io_parallel_fs: there collective buffering and MPI-IO's hints
 * can pay, and every rank opening the file on its own loads the metadata servers) and
 * GP_IO_POSIX elsewhere (a local disk, tmpfs, NFS, an unknown type, or env NULL / statfs
 * failed). Pure: returns GP_IO_POSIX or GP_IO_MPIIO. */
gp_io_mode gp_io_choose(gp_io_mode requested, const gp_io_env *env);

#endif /* GP_IODRIVER_H */
