/* fault.h — the test hook GPUPRIM_FAULT=RANK:PHASE[:kill|:segv]: rank RANK fails when it reaches
 * phase PHASE of the job (alloc, read, reduce, sort, exchange, write; out of core, runs,
 * after its first run, and merge; and inside the rank exchange, which gets them through
 * gp_exchange_config: xsetup, its shared-transport setup, and xstep, its first step with a
 * partner), by default as a failed
 * call (the ranks agree on the error and leave together), with ":kill" by SIGKILL (the
 * launcher then ends the job), with ":segv" by a store to an unmapped address (the
 * fatal-signal line of startup.h, then the launcher ends the job); and RANK:finalize:segv
 * just after MPI_Finalize returns, where such a fault ends the rank with the job's status
 * (startup.h: gp_proc_finalizing). As binding.h does for the GPU choice, the environment is read
 * into a record once (gp_fault_from_env) and a pure function decides (gp_fault_hits). */
#ifndef GP_FAULT_H
#define GP_FAULT_H

typedef struct gp_fault {
    int set;         /* 1 when the variable named a rank and a phase */
    int rank;
    char phase[32];
    int kill;        /* ":kill": SIGKILL instead of a failed call */
    int segv;        /* ":segv": a segmentation fault instead of a failed call */
} gp_fault;

/* Parses a GPUPRIM_FAULT value ("RANK:PHASE" or "RANK:PHASE:kill", RANK an int by the
 * integer rule of every knob, gp_knob_int in kernels/tuning.h; NULL or anything else: no
 * fault) into *f. Pure. */
void gp_fault_parse(const char *value, gp_fault *f);

/* gp_fault_parse of the environment variable GPUPRIM_FAULT. */
void gp_fault_from_env(gp_fault *f);

/* 1 when the fault *f is for this rank and phase. Pure. */
int gp_fault_hits(const gp_fault *f, int rank, const char *phase);

/* When *f hits (rank, phase): says so on stderr ("gpuprim_mpi: rank R: GPUPRIM_FAULT:
 * injected failure|SIGKILL|segmentation fault in phase P"), raises SIGKILL for a kill,
 * faults for a segv, and returns 1; else 0. */
int gp_fault_fire(const gp_fault *f, int rank, const char *phase);

/* Hands the I/O's test hooks (RANK:pread, RANK:pwrite, RANK:tmpfile of *f, for this rank)
 * to io/ (gp_h5_set_faults of h5io.h): io/ reads no GPUPRIM_FAULT of its own. Not
 * collective. */
void gp_fault_set_io(const gp_fault *f, int rank);

#endif /* GP_FAULT_H */
