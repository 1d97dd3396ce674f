/* phases.h — the job's one phase vocabulary: every phase of the jobs, and every point inside
 * one that a test hook names, with the time row it is booked in (the report's phase table,
 * the JSON's times_ms keys), its progress line and its GPUPRIM_FAULT name. The report
 * (report.c, report_doc.c), the progress lines and the fault hooks (job.c, the ph_*.c
 * phases, fault.c's I/O hooks) take these names from gp_phase_words and from nowhere else;
 * tests and users rely on every one of them, so a new phase adds a word and changes none.
 *
 * A new phase of the file job: a word here (a row of its own when the report shows its
 * time, else the row it counts towards), its function in a ph_*.c file of its own, and a
 * row of job.c's phase table. */
#ifndef GP_PHASES_H
#define GP_PHASES_H

/* The words. The first GP_NPHASES are the time rows, in the report's order (seconds; the
 * report shows ms, max over ranks; teardown is rank 0's, which waits for every rank's). "alloc" is the one-time allocation of the job's buffers
 * (device memory, and on the CUDA backend the pinned host memory: the two pieces the file's
 * data go through, the exchange's staging buffers); "read" is the rest from the start:
 * opening the input, finding the dataset, planning the memory, and the reads (with the
 * uploads overlapped); "distribution" the histogram, quantiles and distinct count. The words
 * after them count towards one of those rows. */
typedef enum gp_phase_id {
    GP_PH_ALLOC = 0,
    GP_PH_READ,
    GP_PH_UPLOAD,
    GP_PH_REDUCE,
    GP_PH_INTEGRATE,
    GP_PH_SCAN,              /* the prefix scans (--cumsum, --cumulative-integral) */
    GP_PH_SORT,
    GP_PH_EXCHANGE,
    GP_PH_VERIFY,
    GP_PH_DIST,
    GP_PH_WRITE,
    GP_PH_TOTAL,             /* the job: from its first phase's start to its last's end */
    GP_PH_STARTUP,           /* outside the job: from main's entry to the first phase
                                (MPI_Init, the backend and its CUDA context, the checks) */
    GP_PH_TEARDOWN,          /* outside the job: from the last phase's end to the report
                                (rank 0: the buffers released on every rank, the times
                                gathered); MPI_Finalize and the exit come after it */
    GP_NPHASES,              /* the number of time rows */
    GP_PH_OPEN = GP_NPHASES, /* the input opened, its shard found */
    GP_PH_PLAN,              /* the device memory planned */
    GP_PH_COMBINE,           /* the ranks' statistics combined */
    GP_PH_XSETUP,            /* the exchange's shared-transport setup (in alloc) */
    GP_PH_XSTEP,             /* the exchange's first step with a partner */
    GP_PH_PREAD,             /* a posix read of the input (io/) */
    GP_PH_PWRITE,            /* a posix write of --out (io/) */
    GP_PH_TMPFILE,           /* --out's temporary file created (io/) */
    GP_PH_RUNS,              /* out of core: the runs through the device (ph_ooc.c) */
    GP_PH_MERGE,             /* out of core: the runs merged on the host (ph_ooc.c) */
    GP_PH_SPACE,             /* --out's space checked (in open); its fault makes rank 0 see
                                room that is not there, so that the write's own reservation
                                meets the full file system */
    GP_PH_HIST,              /* --histogram (in the distribution row) */
    GP_PH_QUANT,             /* --quantiles / --median: the select or the sorted read */
    GP_PH_DISTINCT,          /* --distinct: the runs of the sorted data */
    GP_PH_WORDS              /* the number of words */
} gp_phase_id;

/* One word: what a user sees of a phase. */
typedef struct gp_phase_word {
    gp_phase_id row;      /* the time row its time counts towards (a row: itself) */
    const char *label;    /* a row's label in the phase table and times_ms; NULL for the
                             others (they show under their row's) */
    const char *progress; /* its progress line, "gpuprim_mpi: LABEL..." (progress.h); NULL:
                             none */
    const char *fault;    /* the PHASE of GPUPRIM_FAULT=RANK:PHASE that fails it (fault.h);
                             NULL: none */
} gp_phase_word;

/* The vocabulary, indexed by gp_phase_id (phases.c). */
extern const gp_phase_word gp_phase_words[GP_PH_WORDS];

/* The label of the time row that word id counts towards ("local sort" for GP_PH_SORT,
 * "read" for GP_PH_OPEN); NULL for an id out of range. Pure. */
const char *gp_phase_label(int id);

/* The progress line's label of word id; NULL: none, or out of range. Pure. */
const char *gp_phase_progress(int id);

/* The GPUPRIM_FAULT name of word id ("sort" for GP_PH_SORT); NULL: none, or out of range.
 * Pure. */
const char *gp_phase_fault(int id);

#endif /* GP_PHASES_H */
