/* pipeline.h — the file job's two piece pipelines between the file and the backend's memory
 * (private to the job's files; the pieces' record, gp_xfer, is jobstate.h's): the read, each
 * piece's upload overlapped with the next read, and the write, each piece's download
 * overlapped with the write of the one before; the two host pieces they go through, and the
 * rule of their size. */
#ifndef GP_PIPELINE_H
#define GP_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "gpuprim/h5io.h"
#include "jobstate.h"

/* Bytes per piece of the file job's reads (each piece's upload overlapped with the next
 * read) and, through host pieces, of its writes (each piece's download overlapped with the
 * write of the one before); with io == GP_IO_MPIIO every piece is one collective call per
 * rank. knob (GPUPRIM_READ_PIECE_BYTES: gp_tuning.read_piece_bytes, tuning.h) when > 0; else 256 MiB for GP_IO_MPIIO, else 0 with
 * `unified` (the data straight into and out of the CPU backend's memory, a shard in one
 * call) and 4 MiB otherwise (two pinned pieces on the CUDA backend). Never more than
 * `most` (the bytes of the largest read), and at least 8 (a float64 coordinate); 0 stays
 * 0. The job goes through two host pieces on the CUDA backend, and on the CPU backend when
 * the knob is set (so that CI runs that path). Pure. */
int64_t gp_job_piece_bytes(int64_t knob, gp_io_mode io, int unified, int64_t most);

/* The pieces of j->x for reads of at most `span` elements (the largest shard or chunk):
 * their size (gp_job_piece_bytes, with the test knob GPUPRIM_READ_PIECE_BYTES), and unless
 * the data go straight to and from the backend's memory, the two host pieces (pinned on
 * CUDA; job_release frees them). Returns 0 or GP_EXIT_DEVICE with j->msg set. */
int gp_pieces_alloc(gp_job *j, int64_t span);

/* How this process reads chunked input (gp_h5_set_chunk_reads): the direct chunk path unless
 * GPUPRIM_DIRECT_CHUNKS=0, with GPUPRIM_INFLATE_THREADS threads per rank, else the rank's
 * share of its node's cores among its node_ranks ranks (the tuning record's knobs). */
void gp_set_chunk_reads(int node_ranks);

/* Opens a reader of dataset (NULL: the input's) as type `as`, books the time in the read
 * row. Collective (agreed). */
int gp_open_reader(gp_job *j, const char *dataset, gp_dtype as, gp_h5_reader **r);

/* Reads [off, off + cnt) through reader r (sz bytes per element) into dev[0, cnt) of the
 * backend's memory: on the CPU backend straight into it, else through the two pinned
 * pieces of j->x, each piece's upload (be->upload_async) running while the next piece is
 * read. A chunked input read by the direct chunk path is told the range first
 * (gp_h5_reader_expect, unless the caller told it a range that covers this one): its pool
 * decodes the chunks of the next pieces while a piece uploads. m is the largest shard or
 * chunk (the same on every rank, so that every rank makes the same number of calls, as the
 * mpiio driver's collective ones need). `progress`: the reads are the current phase's work
 * (gp_progress_work, in bytes, counted per piece; a read that would be one call goes in
 * pieces of 256 MiB where this rank shows progress and reads with the posix driver), and
 * the upload phase starts a progress line when the reads end. Books the read time in the
 * read row and the final wait for the uploads in the upload row. A failed upload does not
 * stop the reads (with mpiio the other ranks are in them); it is reported after the last
 * one. Returns 0 or a GP_IO_* / GP_EXIT_DEVICE code with j->msg set: with the posix driver
 * the error is this rank's own (as is an upload's; the caller agrees). */
int gp_read_upload(gp_job *j, gp_h5_reader *r, size_t sz, int64_t off, int64_t cnt, int64_t m,
                   void *dev, int progress);

/* Writes dataset k of the output from this rank's nk elements (sz bytes each; global offset
 * woff) in the backend's memory src: on the CPU backend straight from it (one call; in
 * pieces of 256 MiB where this rank shows progress and the writer is posix), else
 * through the two pinned pieces of j->x, piece p + 1 downloading (be->download_async, after
 * be->synchronize) while piece p is written. Every rank makes the same number of writer
 * calls (pieces of the m slots; after a failed download a rank goes on with empty ones), as
 * the mpiio driver's collective writes need. Counts the bytes written as progress
 * (gp_progress_add; the caller declares the work). Returns 0 or a GP_IO_EWRITE / GP_EXIT_DEVICE
 * code with j->msg set (posix: this rank's own; the caller agrees). */
int gp_write_from(gp_job *j, gp_h5_writer *w, int k, const void *src, size_t sz, int64_t woff,
                  int64_t nk);

#endif /* GP_PIPELINE_H */
