/* test_h5chunks.c — MPI tests of the direct chunk path (io/h5_chunks.c, h5_filters.c,
 * h5_pool.c) against H5Dread, on the files of tests/h5_chunk_fixtures.py.
 *
 * usage: mpirun -np P test_h5chunks OUTDIR [--io posix|mpiio]
 * OUTDIR holds the fixtures and their list (chunks.list). For every dataset the list says the
 * direct path reads, every rank reads the whole dataset through H5Dread (direct chunk reads
 * off) as the reference, then its shard through the direct path, as the stored type's
 * element type and as float64 (a conversion), with 1, 3 and 64 threads, for three cuts of
 * the flattened index among the ranks (even; boundaries inside chunks with an empty shard;
 * every rank an overlapping range), each read at once, in pieces after
 * gp_h5_reader_expect, and in pieces without it: the bytes must equal the reference's.
 * The datasets another filter or a user block sends through H5Dread must not take the
 * direct path and must read the same. A damaged chunk must fail the read on every rank with
 * GP_IO_EREAD and one message naming the file, the dataset and the chunk's offset (an LZF
 * dataset where gpuprim has no liblzf: not the direct path, the read's line names liblzf,
 * h5_chunk_fixtures.py --lzf OFF). The pread
 * test hook (gp_h5_set_faults) fails the posix driver's chunk reads, as an I/O error in a
 * decoding thread. Plain checks of HDF5's Fletcher-32 and of the threads' share come first.
 * Prints one line per check and "N passed, N failed" last; exit 0 only if every check
 * passed.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "gpuprim/h5io.h"
#include "h5io_internal.h"
#include "test_mpi_check.h"

#define MSG 2048

static gp_io_mode g_io = GP_IO_POSIX;

/* ---- plain checks ---------------------------------------------------------------------- */

/* HDF5's Fletcher-32, written out the long way: sums of 16-bit big-endian words mod 65535
 * with the fold schedule of H5_checksum_fletcher32 (360 words). */
static uint32_t fletcher_ref(const unsigned char *p, size_t n)
{
    uint64_t s1 = 0, s2 = 0;
    size_t i = 0, words = 0;
    for (; i + 1 < n; i += 2) {
        s1 += (uint32_t)p[i] << 8 | p[i + 1];
        s2 += s1;
        if (++words == 360) {
            s1 = (s1 & 0xffff) + (s1 >> 16);
            s2 = (s2 & 0xffff) + (s2 >> 16);
            words = 0;
        }
    }
    if (words) {
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    if (n % 2) {
        s1 += (uint32_t)p[n - 1] << 8;
        s2 += s1;
        s1 = (s1 & 0xffff) + (s1 >> 16);
        s2 = (s2 & 0xffff) + (s2 >> 16);
    }
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
    return (uint32_t)(s2 << 16 | s1);
}

static void plain_checks(void)
{
    unsigned char buf[3000];
    uint32_t x = 7;
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
    int ok = gp_h5io_fletcher32("", 0) == 0 && gp_h5io_fletcher32("\x01\x02", 2) == 0x01020102u;
    const size_t sizes[] = {1, 2, 3, 719, 720, 721, 722, 1441, 2999, 3000};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        if (gp_h5io_fletcher32(buf, sizes[k]) != fletcher_ref(buf, sizes[k])) {
            ok = 0;
            why("fletcher32 of %zu bytes: %08x, want %08x", sizes[k],
                (unsigned)gp_h5io_fletcher32(buf, sizes[k]), (unsigned)fletcher_ref(buf, sizes[k]));
        }
    memset(buf, 0xff, sizeof buf);
    ok = ok && gp_h5io_fletcher32(buf, sizeof buf) == fletcher_ref(buf, sizeof buf);
    check(ok, "Fletcher-32: HDF5's fold schedule, odd lengths, all-ones bytes");
    /* threads: the knob; else min(own cores, online / node ranks), at least 1 */
    ok = gp_h5io_thread_share(5, 8, 16, 16) == 5 && gp_h5io_thread_share(0, 1, 16, 16) == 16 &&
         gp_h5io_thread_share(0, 4, 16, 16) == 4 && gp_h5io_thread_share(0, 4, 8, 16) == 4 &&
         gp_h5io_thread_share(0, 4, 1, 16) == 1 && gp_h5io_thread_share(0, 32, 16, 16) == 1 &&
         gp_h5io_thread_share(0, 0, 2, 2) == 2 && gp_h5io_thread_share(0, 3, 0, 0) == 1 &&
         gp_h5io_thread_share(0, 2, 112, 112) == 56;
    check(ok, "the threads' share: knob, own cores, node's cores / node ranks");
}

/* ---- reads ----------------------------------------------------------------------------- */

typedef struct item {
    char file[1024], dset[1024], how[16], offset[64], word[64];
} item;

/* The whole dataset as `as` through H5Dread (direct chunk reads off) into a new buffer on
 * every rank; NULL on failure (checked by the caller). */
static void *read_ref(const gp_h5_input *in, gp_dtype as)
{
    char msg[MSG];
    const gp_h5_chunk_reads off = {0, 0, 0};
    gp_h5_set_chunk_reads(&off);
    void *buf = malloc((size_t)(in->n ? in->n : 1) * gp_dtype_size(as));
    int rc = buf ? gp_h5_read(W, in, NULL, as, 0, in->n, buf, msg, sizeof msg) : -1;
    gp_h5_set_chunk_reads(NULL);
    if (rc) {
        why("reference read of %s %s: %s", in->file, in->dataset, msg);
        free(buf);
        return NULL;
    }
    return buf;
}

/* This rank's range of cut `cut` of n elements: 0 even, 1 boundaries moved inside chunks
 * (rank 1 empty when P > 2), 2 overlapping ranges. */
static void range_of(int cut, int64_t n, int64_t *off, int64_t *cnt)
{
    if (cut == 0) {
        gp_shard_range(n, nranks, rank, off, cnt);
        return;
    }
    if (cut == 2) {
        *off = n * rank / (2 * nranks);
        *cnt = n - *off - (n / 7) * (rank % 2);
        if (*cnt < 0) *cnt = 0;
        return;
    }
    int64_t lo = rank == 0 ? 0 : n * rank / nranks + 13 * rank, hi;
    hi = rank == nranks - 1 ? n : n * (rank + 1) / nranks + 13 * (rank + 1);
    if (nranks > 2 && rank == 1) hi = lo;
    if (nranks > 2 && rank == 2) lo = n * 1 / nranks + 13;
    if (lo > n) lo = n;
    if (hi > n) hi = n;
    *off = lo;
    *cnt = hi > lo ? hi - lo : 0;
}

/* Reads [off, off+cnt) through r into buf in `mode`: 0 at once, 1 pieces of `piece` after
 * gp_h5_reader_expect, 2 pieces without it. Returns the first error code. */
static int read_mode(gp_h5_reader *r, int mode, int64_t off, int64_t cnt, int64_t piece,
                     size_t sz, unsigned char *buf, char *msg)
{
    if (mode == 0) return gp_h5_reader_read(r, off, cnt, buf, msg, MSG);
    if (mode == 1) gp_h5_reader_expect(r, off, cnt);
    int64_t most = cnt; /* mpiio: every rank makes the same number of (collective) reads */
    if (g_io == GP_IO_MPIIO) MPI_Allreduce(&cnt, &most, 1, MPI_INT64_T, MPI_MAX, W);
    int rc = 0;
    for (int64_t d = 0; d < most && (!rc || g_io == GP_IO_MPIIO); d += piece) {
        const int64_t lo = d < cnt ? d : cnt, c = cnt - lo < piece ? cnt - lo : piece;
        const int rc1 = gp_h5_reader_read(r, off + lo, c, buf + (size_t)lo * sz, msg, MSG);
        if (!rc) rc = rc1;
    }
    return rc;
}

/* One dataset the direct path reads: every thread count, cut and mode against ref. */
static void check_direct(const item *it, const gp_h5_input *in, gp_dtype as, const void *ref)
{
    static const int threads[] = {1, 3, 64};
    const size_t sz = gp_dtype_size(as);
    char msg[MSG] = "";
    int ok = 1;
    for (int t = 0; t < 3; t++) {
        const gp_h5_chunk_reads cr = {1, threads[t], 0};
        gp_h5_set_chunk_reads(&cr);
        for (int cut = 0; cut < 3; cut++) {
            int64_t off, cnt;
            range_of(cut, in->n, &off, &cnt);
            unsigned char *buf = malloc((size_t)(cnt ? cnt : 1) * sz);
            gp_h5_reader *r = NULL;
            int rc = gp_h5_reader_open(W, in, NULL, as, &r, msg, sizeof msg);
            if (!rc && strcmp(gp_h5_reader_how(r), "chunks") != 0) {
                ok = 0;
                why("%s %s: read by %s, not the direct chunk path", it->file, it->dset,
                    gp_h5_reader_how(r));
            }
            for (int mode = 0; !rc && mode < 3; mode++) {
                const int64_t piece = mode == 1 ? 777 : 1 + in->n / 5;
                memset(buf, 0xcd, (size_t)(cnt ? cnt : 1) * sz);
                rc = read_mode(r, mode, off, cnt, piece, sz, buf, msg);
                if (!rc && cnt && memcmp(buf, (const unsigned char *)ref + (size_t)off * sz,
                                         (size_t)cnt * sz) != 0) {
                    ok = 0;
                    why("%s %s as %s: threads %d cut %d mode %d: [%lld, +%lld) differs from "
                        "H5Dread", it->file, it->dset, gp_dtype_name(as), threads[t], cut, mode,
                        (long long)off, (long long)cnt);
                }
                if (g_io == GP_IO_MPIIO) continue; /* agreed already */
                MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, W);
            }
            if (rc) {
                ok = 0;
                why("%s %s: %s", it->file, it->dset, msg);
            }
            gp_h5_reader_close(r);
            free(buf);
        }
    }
    gp_h5_set_chunk_reads(NULL);
    check(ok, "%s %s as %s: the direct path gives H5Dread's bytes (3 thread counts, 3 cuts, "
          "3 ways)", it->file, it->dset, gp_dtype_name(as));
}

/* A dataset that must go through H5Dread: not the direct path, the same bytes. */
static void check_hdf5(const item *it, const gp_h5_input *in, const void *ref)
{
    char msg[MSG] = "";
    gp_h5_reader *r = NULL;
    const size_t sz = gp_dtype_size(in->dtype);
    void *buf = malloc((size_t)in->n * sz);
    int rc = gp_h5_reader_open(W, in, NULL, in->dtype, &r, msg, sizeof msg);
    int ok = !rc && strcmp(gp_h5_reader_how(r), "chunks") != 0;
    if (!rc) rc = gp_h5_reader_read(r, 0, in->n, buf, msg, sizeof msg);
    ok = ok && !rc && memcmp(buf, ref, (size_t)in->n * sz) == 0;
    if (!ok)
        why("%s %s: how %s, rc %d %s", it->file, it->dset, r ? gp_h5_reader_how(r) : "-", rc,
            msg);
    gp_h5_reader_close(r);
    free(buf);
    check(ok, "%s %s: through H5Dread (%s), the same bytes", it->file, it->dset,
          g_io == GP_IO_MPIIO ? "mpiio" : "hdf5");
}

/* An LZF dataset in a build without liblzf: not the direct path, and the read fails on every
 * rank with the line that says how to get LZF. */
static void check_nolzf(const item *it, const gp_h5_input *in)
{
    char msg[MSG] = "";
    gp_h5_reader *r = NULL;
    const size_t sz = gp_dtype_size(in->dtype);
    void *buf = malloc((size_t)in->n * sz);
    int rc = gp_h5_reader_open(W, in, NULL, in->dtype, &r, msg, sizeof msg);
    const int direct = !rc && strcmp(gp_h5_reader_how(r), "chunks") == 0;
    if (!rc) rc = gp_h5_reader_read(r, 0, in->n, buf, msg, sizeof msg);
    const int ok = !direct && rc != 0 && strstr(msg, "liblzf") && strstr(msg, in->dataset);
    if (!ok) why("%s %s: how %s, rc %d, message \"%s\"", it->file, it->dset,
                 r ? gp_h5_reader_how(r) : "-", rc, msg);
    gp_h5_reader_close(r);
    free(buf);
    check(ok, "%s %s: without liblzf, H5Dread's line that says how to get LZF", it->file,
          it->dset);
}

/* A damaged chunk: the whole read fails on every rank with its offset named, also with the
 * reads in pieces on each rank's own shard (the rank that meets it fails). */
static void check_bad(const item *it, const gp_h5_input *in)
{
    char msg[MSG] = "", want[200];
    snprintf(want, sizeof want, "chunk at offset %s", it->offset);
    const size_t sz = gp_dtype_size(in->dtype);
    void *buf = malloc((size_t)in->n * sz);
    const int rc = gp_h5_read(W, in, NULL, in->dtype, 0, in->n, buf, msg, sizeof msg);
    int ok = rc == GP_IO_EREAD && strstr(msg, in->file) && strstr(msg, in->dataset) &&
             strstr(msg, want) && strstr(msg, it->word) && !strchr(msg, '\n');
    if (!ok) why("%s %s: rc %d, message \"%s\", want \"%s\" and \"%s\"", it->file, it->dset, rc,
                 msg, want, it->word);
    const int same = same_everywhere(rc, msg);
    if (rank == 0) printf("   message: %s\n", msg);
    free(buf);
    check(ok && same, "%s %s: a damaged chunk fails the read, its offset %s named%s", it->file,
          it->dset, it->offset, same ? "" : ", NOT the same on all ranks");
}

/* The pread test hook: the posix driver's chunk reads fail (mpiio ignores it). */
static void check_fault(const item *it, const gp_h5_input *in, const void *ref)
{
    char msg[MSG] = "";
    const gp_h5_faults f = {1, 0, 0};
    const size_t sz = gp_dtype_size(in->dtype);
    void *buf = malloc((size_t)in->n * sz);
    gp_h5_set_faults(&f);
    const int rc = gp_h5_read(W, in, NULL, in->dtype, 0, in->n, buf, msg, sizeof msg);
    gp_h5_set_faults(NULL);
    const int ok = g_io == GP_IO_MPIIO ? rc == 0 && memcmp(buf, ref, (size_t)in->n * sz) == 0
                                       : rc == GP_IO_EREAD && strstr(msg, "Input/output error") &&
                                             strstr(msg, "chunk at offset [");
    if (!ok) why("fault: rc %d %s", rc, msg);
    free(buf);
    check(ok, "%s %s: the pread hook %s", it->file, it->dset,
          g_io == GP_IO_MPIIO ? "is ignored by mpiio" : "fails the chunk reads");
}

static void run_item(const item *it, int *faulted)
{
    gp_h5_input in;
    char msg[MSG];
    int rc = gp_h5_open_io(W, it->file, it->dset, g_io, &in, msg, sizeof msg);
    if (!check(rc == 0, "open %s %s", it->file, it->dset)) {
        why("%s", msg);
        return;
    }
    if (strcmp(it->how, "bad") == 0 || strcmp(it->how, "nolzf") == 0) {
        if (it->how[0] == 'b')
            check_bad(it, &in);
        else
            check_nolzf(it, &in);
        gp_h5_close(&in);
        return;
    }
    void *ref = read_ref(&in, in.dtype);
    if (check(ref != NULL, "%s %s: the reference read", it->file, it->dset)) {
        if (strcmp(it->how, "hdf5") == 0) {
            check_hdf5(it, &in, ref);
        } else {
            check_direct(it, &in, in.dtype, ref);
            if (!*faulted && in.n > 1000) {
                check_fault(it, &in, ref);
                *faulted = 1;
            }
        }
    }
    free(ref);
    if (strcmp(it->how, "chunks") == 0 && in.dtype != GP_F64) {
        void *ref64 = read_ref(&in, GP_F64);
        if (check(ref64 != NULL, "%s %s: the float64 reference read", it->file, it->dset))
            check_direct(it, &in, GP_F64, ref64);
        free(ref64);
    }
    gp_h5_close(&in);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    W = MPI_COMM_WORLD;
    MPI_Comm_rank(W, &rank);
    MPI_Comm_size(W, &nranks);
    if (argc < 2) {
        if (rank == 0) fprintf(stderr, "usage: test_h5chunks OUTDIR [--io posix|mpiio]\n");
        MPI_Finalize();
        return 2;
    }
    if (argc >= 4 && strcmp(argv[2], "--io") == 0)
        g_io = strcmp(argv[3], "mpiio") == 0 ? GP_IO_MPIIO : GP_IO_POSIX;
    plain_checks();
    char list[1100];
    snprintf(list, sizeof list, "%s/chunks.list", argv[1]);
    FILE *f = fopen(list, "r");
    if (!check(f != NULL, "the fixtures' list %s", list)) {
        MPI_Finalize();
        return 1;
    }
    item it;
    char line[2400];
    int faulted = 0;
    while (fgets(line, sizeof line, f)) { /* FILE \t DATASET \t HOW [\t OFFSET \t WORD] */
        memset(&it, 0, sizeof it);
        line[strcspn(line, "\n")] = '\0';
        char *field[5] = {NULL};
        int k = 0;
        for (char *p = strtok(line, "\t"); p && k < 5; p = strtok(NULL, "\t")) field[k++] = p;
        if (k < 3) continue;
        snprintf(it.file, sizeof it.file, "%s", field[0]);
        snprintf(it.dset, sizeof it.dset, "%s", field[1]);
        snprintf(it.how, sizeof it.how, "%s", field[2]);
        if (k == 5) {
            snprintf(it.offset, sizeof it.offset, "%s", field[3]);
            snprintf(it.word, sizeof it.word, "%s", field[4]);
        }
        run_item(&it, &faulted);
    }
    fclose(f);
    if (rank == 0) printf("%d passed, %d failed\n", npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
