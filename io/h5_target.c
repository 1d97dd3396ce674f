/* h5_target.c — an output path before anything is written (gpuprim/h5io.h: gp_h5_check_target):
 * a name that fits, no directory, link or special file in the way, no file unless force, a
 * writable folder; and the temporary name beside the target that the writer creates. */
#define _POSIX_C_SOURCE 200809L
#include "h5io_internal.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

/* The checks of an output path before anything is written; dir (GP_H5_PATHLEN bytes)
 * receives its folder. */
static void check_target(const char *path, int force, char *dir, gp_err *e)
{
    struct stat st;
    if (!path || !path[0] || strlen(path) >= GP_H5_PATHLEN) {
        fail(e, GP_IO_EWRITE, "%.64s...: bad output file name (empty, or %d bytes or more)",
             path ? path : "", GP_H5_PATHLEN);
        return;
    }
    gp_path_folder(path, dir, GP_H5_PATHLEN, NULL); /* fits: path is shorter */
    const int exists = lstat(path, &st) == 0;
    /* what --force would not replace first, so that it is not suggested in vain */
    if (exists && S_ISDIR(st.st_mode))
        fail(e, GP_IO_EWRITE, "%s: cannot write: is a directory", path);
    else if (exists && S_ISLNK(st.st_mode)) /* rename would replace the link itself */
        fail(e, GP_IO_EWRITE, "%s: is a symbolic link, not replaced (give its target)", path);
    else if (exists && !S_ISREG(st.st_mode)) /* a device, FIFO or socket */
        fail(e, GP_IO_EWRITE, "%s: is not a regular file, not replaced", path);
    else if (exists && !force)
        fail(e, GP_IO_EWRITE, "%s: exists (use --force to overwrite)", path);
    else if (access(dir, W_OK | X_OK) != 0)
        fail(e, GP_IO_EWRITE, "%s: cannot write: %s (%s)", path, strerror(errno), dir);
}

int gp_h5_check_target(const char *path, int force, char *msg, size_t msglen)
{
    gp_err e;
    char dir[GP_H5_PATHLEN];
    memset(&e, 0, sizeof e);
    check_target(path, force, dir, &e);
    return finish(&e, msg, msglen);
}

void gp_h5io_pick_tmp(const char *path, int force, gp_io_mode io, char *tmp, int *mode,
                      gp_err *e)
{
    struct stat st;
    char dir[GP_H5_PATHLEN];
    gp_io_env env;
    check_target(path, force, dir, e);
    /* a short hidden temporary name beside the target: a target name near NAME_MAX leaves
     * no room for a suffix, and a rename within the folder is atomic */
    if (!e->rc && snprintf(tmp, GP_H5_TMPLEN, "%s/.gpuprim.%ld.tmp", dir, (long)getpid()) >=
                      GP_H5_TMPLEN)
        fail(e, GP_IO_EWRITE, "%s: file name too long", path);
    else if (!e->rc && lstat(tmp, &st) == 0)
        fail(e, GP_IO_EWRITE, "%s: temporary file %s exists already", path, tmp);
    if (!e->rc) {
        gp_io_env_of(dir, &env);
        *mode = (int)gp_io_choose(io, &env);
    }
}

