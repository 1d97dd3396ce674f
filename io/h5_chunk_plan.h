/* h5_chunk_plan.h — the plan of the direct chunk path (h5_chunk_plan.c), which its stream
 * (h5_chunks.c) builds on (private to io/): the chunk reader's record and its limits, a
 * chunk's record in its window, the chunk index the stream asks where each chunk's bytes
 * are, and the release of what the plan made. A file that includes it defines
 * _POSIX_C_SOURCE 200809L or more first. */
#ifndef GP_H5_CHUNK_PLAN_H
#define GP_H5_CHUNK_PLAN_H

#include "h5io_internal.h"

/* The decoded chunks of one chunk row of an N-D dataset (held while its rows are read). */
#define GP_CK_SLAB_BYTES ((int64_t)1 << 30)
/* Decoded chunks queued ahead of the reads: twice the threads, within this many bytes. */
#define GP_CK_AHEAD_BYTES ((int64_t)1 << 30)

/* One chunk in the window. */
typedef struct gp_ck_slot {
    gp_pool_task task;              /* first: the pool's link and done flag */
    int64_t index;                  /* in the chunk grid, row-major */
    hsize_t lo[GP_H5_MAXDIMS];      /* its elements: [lo, hi) in each dimension, clipped */
    hsize_t hi[GP_H5_MAXDIMS];
    int64_t first, last;            /* the flattened index of its first and last element */
    haddr_t addr;                   /* its stored bytes */
    hsize_t size;
    unsigned mask;                  /* filters skipped when it was written */
    int converted;                  /* buf holds memory-type elements */
    unsigned char *buf;             /* the decoded chunk (the reader's mbytes) */
    unsigned char *direct;          /* else decoded straight into the caller's buffer here */
    int err;                        /* set by the pool thread: errno (-1: corrupt) */
    int64_t at;                     /* the byte a failed pread stopped at */
    char why[200];
} gp_ck_slot;

/* A reader's direct chunk path (gp_h5_reader.ck). */
struct gp_ck_reader {
    gp_h5_reader *r;
    int nd, same, contiguous;
    hsize_t dims[GP_H5_MAXDIMS], cdim[GP_H5_MAXDIMS], nck[GP_H5_MAXDIMS];
    int64_t dstride[GP_H5_MAXDIMS]; /* elements per index step, dataset */
    int64_t cstride[GP_H5_MAXDIMS]; /* elements per index step, chunk buffer */
    int64_t celems, per_row;        /* elements of a chunk; chunks of a chunk row */
    int64_t chunks;                 /* in the grid */
    size_t fsz, msz, mbytes;        /* stored and memory element bytes; a buffer's bytes */
    hid_t ftype, memtype;
    gp_ck_pipe pipe;
    int fd;
    int64_t file_bytes;
    int fault;
    /* the pool */
    int threads, ahead;
    gp_pool *pool;
    gp_ck_scratch **scratch;
    /* the stream through [ea, eb) */
    int valid;
    int64_t ea, eb, pos;
    int64_t cursor, cand_end;       /* the next chunk to consider; the end of the candidates */
    gp_ck_slot **win;               /* the window, oldest first (a plain array) */
    int nwin, capwin;
    gp_ck_slot **spare;             /* slots to reuse, with their buffers */
    int nspare, capspare;
    /* the read in progress */
    int64_t ra, rb;
    unsigned char *rbuf;
    int64_t tab_lo, tab_n;          /* H5Dchunk_iter's table of the candidates (or none) */
    haddr_t *tab_addr;
    hsize_t *tab_size;
    unsigned *tab_mask;
};

/* "[x, y, ...]": the offset of chunk s (its first element's coordinates), as h5py gives it. */
void gp_ck_offset_text(const gp_ck_reader *ck, const gp_ck_slot *s, char *out, size_t len);

/* Where chunk s's bytes are (s->addr, s->size, s->mask; addr HADDR_UNDEF: never written): from
 * the table of gp_ck_index, else H5Dget_chunk_info_by_coord. Returns 0, or -1 with e set. */
int gp_ck_locate(gp_ck_reader *ck, gp_ck_slot *s, gp_err *e);

/* A stream is about to read the chunks [lo, hi) of the grid: where the HDF5 has H5Dchunk_iter
 * and they are a sixteenth of the dataset's chunks or more, their addresses in one pass over
 * the chunk index (O(chunks) in all, where H5Dget_chunk_info_by_coord is a search per chunk);
 * else, or without memory, none (gp_ck_locate asks per chunk). */
void gp_ck_index(gp_ck_reader *ck, int64_t lo, int64_t hi);

/* Releases what the plan made — the chunk index's table, the file opened for pread, the
 * stored type — and ck itself (the stream's parts already released: gp_h5io_chunks_close). */
void gp_ck_plan_free(gp_ck_reader *ck);

#endif /* GP_H5_CHUNK_PLAN_H */
