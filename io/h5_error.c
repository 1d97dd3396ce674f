/* h5_error.c — io/'s errors beyond the error state of h5io_internal.h: the most useful text of
 * HDF5's error stack, and the test hooks that make the posix driver's reads and writes fail
 * (gpuprim/h5io.h: gp_h5_set_faults). */
#define _POSIX_C_SOURCE 200809L
#include "h5io_internal.h"

/* H5Ewalk2's callback: keeps the first description that is not plugin-path noise (a plugin
 * one only while there is no other), and notes an H5E_NOTFOUND entry. */
static herr_t why_cb(unsigned n, const H5E_error2_t *err, void *data)
{
    h5why *w = data;
    (void)n;
    if (err->min_num == H5E_NOTFOUND) w->notfound = 1;
    /* what a reader sees of a file whose writer has not flushed or closed it (h5py "w"
     * mode; tests/e2e_badinput.py makes one), or of a copy still in progress */
    if (err->min_num == H5E_TRUNCATED ||
        (err->maj_num == H5E_OHDR && err->min_num == H5E_VERSION) ||
        (err->desc && strstr(err->desc, "already open for write")))
        w->writing = 1;
    if (!w->have && err->desc && err->desc[0]) {
        /* plugin-path noise sits under the useful H5Z entry ("required filter ...") */
        int plugin = err->maj_num == H5E_PLUGIN;
        if (!plugin || !w->desc[0]) snprintf(w->desc, sizeof w->desc, "%s", err->desc);
        if (!plugin) w->have = 1;
    }
    return 0;
}

h5why gp_h5io_reason(void)
{
    h5why w;
    memset(&w, 0, sizeof w);
    if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, why_cb, &w) < 0 || !w.desc[0])
        snprintf(w.desc, sizeof w.desc, "unknown HDF5 error");
    return w;
}

const char *gp_h5io_writing_hint(const h5why *w)
{
    return w->writing ? "; another program may still be writing or copying it: read it once "
                        "the writer has closed it"
                      : "";
}

/* This process's test hooks (gp_h5_set_faults): the program decides them, io/ only obeys. */
static gp_h5_faults g_faults;

const gp_h5_faults *gp_h5io_faults(void) { return &g_faults; }

void gp_h5_set_faults(const gp_h5_faults *f)
{
    if (f) g_faults = *f;
    else memset(&g_faults, 0, sizeof g_faults);
}
