/* host_pages.c — what fresh host memory costs on this machine: the question behind the
 * CPU backend's buffer choices (huge-page scratch, the exchange's buffers reused for the
 * read and the write, the spare given back before the write; bench/RESULTS.md, the entries
 * of the 2-core VM). For MIB MiB (default 512) each, it times
 *   touch   writing pages the first and the second time: 4 KiB anonymous pages, huge pages
 *           (2 MiB-aligned, MADV_HUGEPAGE, as gp_cpu_big_alloc), shared memory pages (a
 *           memfd: tmpfs, as the /dev/shm of MPI's shared window);
 *   read    pread of a file in the page cache (64 MiB calls) into fresh pages of each kind,
 *           into pre-faulted pages (MAP_POPULATE) and into pages written before;
 *   write   pwrite (64 MiB calls) into a new file from private pages (the process's first
 *           write, then again), from shared pages, and from private pages just after MIB MiB
 *           of huge, shared (MADV_REMOVE) or 4 KiB pages were written and given back.
 * The measurements run in this order in one process; each file is new and removed after,
 * so a later row may find the pages an earlier one gave back (as the job's phases do).
 *
 * usage: gpuprim_probe_host_pages DIR [MIB]   (DIR: a folder for its two files)
 * Prints one line per measurement: "host_pages: WHAT KIND SECONDS s". Exit 0, or 1 with
 * a message naming the failed call. Linux only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum kind { K_ANON4K, K_HUGE, K_SHARED, K_POPULATED };
static const char *const KIND_NAME[] = {"anon4k", "huge", "shared", "populated"};

#define PIECE ((size_t)64 << 20) /* bytes per pread / pwrite call */
#define HUGE_ALIGN ((size_t)2 << 20)

static size_t bytes;              /* of every region and file */
static char in_path[4096], out_path[4096];

/* A mapping of `bytes` bytes of one kind. */
struct region {
    enum kind kind;
    char *p;
};

/* Prints "host_pages: WHAT: strerror(errno)" and exits 1. */
static void die(const char *what)
{
    fprintf(stderr, "host_pages: %s: %s\n", what, strerror(errno));
    unlink(in_path);
    unlink(out_path);
    exit(1);
}

/* Monotonic seconds. */
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A fresh region of kind k: no page touched (K_POPULATED: every page faulted in). */
static struct region fresh(enum kind k)
{
    struct region r = {k, NULL};
    void *p = MAP_FAILED;
    if (k == K_HUGE) {
        if (posix_memalign(&p, HUGE_ALIGN, bytes) != 0) die("posix_memalign");
        if (madvise(p, bytes, MADV_HUGEPAGE) != 0) die("madvise(MADV_HUGEPAGE)");
    } else if (k == K_SHARED) {
        const int fd = memfd_create("host_pages", 0);
        if (fd < 0) die("memfd_create");
        if (ftruncate(fd, (off_t)bytes) != 0) die("ftruncate(memfd)");
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (close(fd) != 0) die("close(memfd)");
    } else {
        const int pop = k == K_POPULATED ? MAP_POPULATE : 0;
        p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | pop, -1, 0);
        if (p != MAP_FAILED && madvise(p, bytes, MADV_NOHUGEPAGE) != 0)
            die("madvise(MADV_NOHUGEPAGE)");
    }
    if (p == MAP_FAILED) die("mmap");
    r.p = p;
    return r;
}

/* Gives the region's pages back (shared pages with MADV_REMOVE first, as the exchange's
 * window does). */
static void release(struct region *r)
{
    if (r->kind == K_HUGE) {
        free(r->p);
    } else {
        if (r->kind == K_SHARED && madvise(r->p, bytes, MADV_REMOVE) != 0)
            die("madvise(MADV_REMOVE)");
        if (munmap(r->p, bytes) != 0) die("munmap");
    }
    r->p = NULL;
}

/* Seconds to write every byte of p once (memset). */
static double touch(char *p, int byte)
{
    const double t = now();
    memset(p, byte, bytes);
    return now() - t;
}

/* Seconds to move all `bytes` bytes between the file `path` and p in PIECE calls: pread
 * (reading), or pwrite into a new file without fsync (as gpuprim). */
static double timed_io(const char *path, char *p, int reading)
{
    const int fd = reading ? open(path, O_RDONLY) : open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0) die(reading ? "open (input)" : "open (output)");
    const double t = now();
    for (size_t o = 0; o < bytes;) {
        const size_t n = bytes - o < PIECE ? bytes - o : PIECE;
        const ssize_t got =
            reading ? pread(fd, p + o, n, (off_t)o) : pwrite(fd, p + o, n, (off_t)o);
        if (got <= 0) {
            if (got == 0) errno = EIO;
            die(reading ? "pread" : "pwrite");
        }
        o += (size_t)got;
    }
    const double s = now() - t;
    if (close(fd) != 0) die(reading ? "close (input)" : "close (output)");
    return s;
}

/* Prints one measurement. */
static void report(const char *what, const char *kind, double s)
{
    printf("host_pages: %s %s %.3f s\n", what, kind, s);
    fflush(stdout);
}

/* The touch and read rows. */
static void touch_and_read(void)
{
    for (int k = K_ANON4K; k <= K_SHARED; k++) {
        struct region r = fresh((enum kind)k);
        report("touch-first", KIND_NAME[k], touch(r.p, 1));
        report("touch-second", KIND_NAME[k], touch(r.p, 2));
        release(&r);
    }
    for (int k = K_ANON4K; k <= K_POPULATED; k++) {
        struct region r = fresh((enum kind)k);
        report("read-fresh", KIND_NAME[k], timed_io(in_path, r.p, 1));
        release(&r);
    }
    struct region r = fresh(K_ANON4K);
    touch(r.p, 3);
    report("read-written", KIND_NAME[K_ANON4K], timed_io(in_path, r.p, 1));
    release(&r);
}

/* The write rows: the first write of the process (its page cache takes pages the process
 * has not used yet), the same again (pages the first one's file gave back), from shared
 * pages, then after pages of each kind were written and given back. */
static void writes(void)
{
    struct region src = fresh(K_ANON4K), shared = fresh(K_SHARED);
    touch(src.p, 4);
    touch(shared.p, 4);
    const char *what[] = {"write-first", "write-from", "write-from"};
    const struct region *from[] = {&src, &src, &shared};
    for (int i = 0; i < 3; i++) {
        report(what[i], KIND_NAME[from[i]->kind], timed_io(out_path, from[i]->p, 0));
        if (unlink(out_path) != 0) die("unlink (output)");
    }
    release(&shared);
    const enum kind freed[] = {K_HUGE, K_SHARED, K_ANON4K};
    for (int i = 0; i < 3; i++) {
        struct region r = fresh(freed[i]);
        touch(r.p, 5);
        release(&r);
        report("write-after-freeing", KIND_NAME[freed[i]], timed_io(out_path, src.p, 0));
        if (unlink(out_path) != 0) die("unlink (output)");
    }
    release(&src);
}

/* Entry point: writes the input file (and reads it once, so that it is in the page
 * cache), runs the rows, removes the files. */
int main(int argc, char **argv)
{
    char *end = NULL;
    const long mib = argc > 2 ? strtol(argv[2], &end, 10) : 512;
    if (argc < 2 || argc > 3 || (end && (end == argv[2] || *end != '\0')) || mib < 1 ||
        mib > (1l << 20)) {
        fprintf(stderr,
                "usage: gpuprim_probe_host_pages DIR [MIB]   (MIB: 1..1048576, default 512)\n");
        return 2;
    }
    bytes = (size_t)mib << 20;
    snprintf(in_path, sizeof in_path, "%s/host_pages_%d.in", argv[1], (int)getpid());
    snprintf(out_path, sizeof out_path, "%s/host_pages_%d.out", argv[1], (int)getpid());
    struct region buf = fresh(K_ANON4K);
    touch(buf.p, 7);
    timed_io(in_path, buf.p, 0);
    timed_io(in_path, buf.p, 1);
    release(&buf);
    touch_and_read();
    writes();
    if (unlink(in_path) != 0) die("unlink (input)");
    return 0;
}
