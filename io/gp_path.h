/* gp_path.h — file and dataset names: the folder of an output path, for the checks and the
 * temporary names beside the target, names made printable on one line, and the removal of
 * a temporary file on a failing path (io/h5_*.c, src/report.c, src/report_doc.c,
 * src/setup.c, src/main.c; a file that includes it defines _POSIX_C_SOURCE 200809L or more).
 * Private: not installed. */
#ifndef GP_PATH_H
#define GP_PATH_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The folder of `path` into dir (dirlen bytes): "." for a bare name, "/" for a name in
 * the root, else everything before the last '/' ("a/b/c.h5" -> "a/b"); *base (when not
 * NULL) points at the name after it, inside path. Returns 0, or -1 when the folder does not
 * fit in dir (dir then holds ""). */
static inline int gp_path_folder(const char *path, char *dir, size_t dirlen, const char **base)
{
    const char *slash = strrchr(path, '/');
    const size_t len = !slash ? 1 : slash == path ? 1 : (size_t)(slash - path);
    if (base) *base = slash ? slash + 1 : path;
    if (dirlen == 0) return -1;
    if (len >= dirlen) {
        dir[0] = '\0';
        return -1;
    }
    if (!slash) memcpy(dir, ".", 1);
    else memcpy(dir, path, len); /* "/" itself when the slash is the first byte */
    dir[len] = '\0';
    return 0;
}

/* Shows every control byte of s (a newline in a file or dataset name) as '?', in place, so
 * that a message or a header that prints the name stays one line. */
static inline void gp_one_line(char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f) *s = '?';
}

/* Removes the temporary file tmp on a failing path; when that fails (other than for a file
 * already gone), appends "; could not remove TMP (reason)" to the error in msg (msglen
 * bytes; msg may be NULL). Not collective. */
static inline void gp_remove_tmp(const char *tmp, char *msg, size_t msglen)
{
    if (unlink(tmp) == 0 || errno == ENOENT || !msg || !msglen) return;
    const size_t l = strnlen(msg, msglen);
    if (l + 1 < msglen)
        snprintf(msg + l, msglen - l, "; could not remove %s (%s)", tmp, strerror(errno));
}

#endif
