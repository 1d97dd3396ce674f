/* binding.h — which GPU a rank uses: a pure decision from the rank's place on its node,
 * the number of devices it sees and its environment (CUDA_VISIBLE_DEVICES, Slurm's
 * SLURM_LOCALID / SLURM_STEP_GPUS / SLURM_JOB_GPUS), so that it can be tested with faked
 * inputs. gp_select_backend (src/setup.c) gathers the inputs and calls it. The same
 * environment gives the node-local rank before MPI_Init (the launchers' variables, for the
 * CUDA context made while MPI_Init runs: startup.h) and the program's start and end knobs
 * (GPUPRIM_TRACE_STARTUP, GPUPRIM_EARLY_CUDA, GPUPRIM_FAST_MPI_INIT, GPUPRIM_FAST_MPI_FINALIZE,
 * GPUPRIM_FREE_AT_EXIT).
 *
 * The rule: device = local_rank mod visible. Under `srun --gpus-per-task=1` every rank sees
 * exactly one device (Slurm narrows CUDA_VISIBLE_DEVICES per task), so mod gives device 0
 * on every rank; nothing ever asks for device = local rank. Ranks share a GPU when more
 * ranks than GPUs run on a node; the job then prints one warning (rank 0).
 */
#ifndef GP_BINDING_H
#define GP_BINDING_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One rank's binding, as the --verbose table and the JSON report show it. */
typedef struct gp_binding {
    int rank, local_rank, local_size;
    char host[64];
    int device;               /* index among the visible devices; -1: CPU backend */
    char device_name[128];    /* "CPU" for the CPU backend */
    char busid[32];           /* PCI bus id, "" when unknown */
    char cuda_visible[160];   /* CUDA_VISIBLE_DEVICES as the rank saw it (truncated); "" if unset */
    int cuda_visible_set;     /* 1 when CUDA_VISIBLE_DEVICES was set (possibly empty) */
} gp_binding;

/* The parts of a rank's environment the decision reads. NULL means "not set". Fill it
 * from the process with gp_bind_env_from_process(), or by hand in tests. */
typedef struct gp_bind_env {
    const char *cuda_visible_devices; /* CUDA_VISIBLE_DEVICES: "0,1", "GPU-<uuid>,...", "" */
    const char *slurm_localid;        /* SLURM_LOCALID: node-local task id under srun */
    const char *slurm_step_gpus;      /* SLURM_STEP_GPUS: Slurm's indices of the GPUs this
                                         task's step gives it on this node */
    const char *slurm_job_gpus;       /* SLURM_JOB_GPUS: Slurm's indices of the job's GPUs
                                         on this node */
    /* the node-local rank as the launcher gives it, before MPI_Init (with slurm_localid) */
    const char *ompi_local_rank;      /* OMPI_COMM_WORLD_LOCAL_RANK: Open MPI's mpirun */
    const char *mpich_local_rank;     /* MPI_LOCALRANKID: MPICH's and Intel MPI's Hydra */
    const char *pmi_local_rank;       /* PMI_LOCAL_RANK: other PMI launchers */
    /* whether the job's ranks all run on this node, before MPI_Init */
    const char *ompi_world_size;      /* OMPI_COMM_WORLD_SIZE: Open MPI's mpirun */
    const char *ompi_local_size;      /* OMPI_COMM_WORLD_LOCAL_SIZE: ... of them on this node */
    const char *slurm_step_nodes;     /* SLURM_STEP_NUM_NODES: the nodes of srun's step */
    /* the program's start and end knobs (gp_start_knobs) */
    const char *trace_startup;        /* GPUPRIM_TRACE_STARTUP */
    const char *early_cuda;           /* GPUPRIM_EARLY_CUDA */
    const char *fast_mpi_init;        /* GPUPRIM_FAST_MPI_INIT */
    const char *fast_mpi_finalize;    /* GPUPRIM_FAST_MPI_FINALIZE */
    const char *free_at_exit;         /* GPUPRIM_FREE_AT_EXIT */
} gp_bind_env;

/* The program's start and end knobs, decided from a gp_bind_env (startup.h uses them). */
typedef struct gp_start_knobs {
    int trace;        /* GPUPRIM_TRACE_STARTUP=1: every rank prints its start-up and teardown
                         steps before it exits; else 0 */
    int early_cuda;   /* 1 (default): the CUDA context is made on a thread while MPI_Init
                         runs; GPUPRIM_EARLY_CUDA=0: after MPI_Init, on the main thread */
    int fast_mpi_init; /* 1 (default): a job on one node asks Open MPI for no cm PML
                         (startup.h); GPUPRIM_FAST_MPI_INIT=0: no such request */
    int fast_mpi_finalize; /* GPUPRIM_FAST_MPI_FINALIZE=1: TCP_NODELAY on the process's TCP
                              sockets before MPI_Finalize (startup.h); else 0 (default) */
    int free_at_exit; /* GPUPRIM_FREE_AT_EXIT=1: the job frees its device and pinned memory
                         and the CUDA context is destroyed before the exit (the old path);
                         else 0: the exit frees them */
} gp_start_knobs;

/* The decision for one rank. */
typedef struct gp_bind_choice {
    int local_rank;      /* node-local rank used (the argument, or SLURM_LOCALID when that
                            was negative); -1 when neither was known */
    int device;          /* device index to use, in [0, visible); -1 when visible <= 0 */
    char gpu_key[64];    /* the chosen GPU's identity on the node (Slurm's index, else the
                            CUDA_VISIBLE_DEVICES entry, else the index): ranks with equal
                            keys on a node use the same GPU; "" when device < 0 */
    int node_gpus;       /* GPUs the node's ranks spread over: the count of SLURM_JOB_GPUS
                            when set, else the visible count (never less than visible) */
    int ranks_per_gpu;   /* ceil(local_size / node_gpus): most ranks on one GPU (0: no GPU) */
    int shared;          /* 1 when ranks_per_gpu > 1 */
} gp_bind_choice;

/* Fills *env from the process's environment (the pointers stay valid until the environment
 * changes). */
void gp_bind_env_from_process(gp_bind_env *env);

/* The node-local rank the launcher gives in the environment, readable before MPI_Init: the
 * first of OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID and PMI_LOCAL_RANK that
 * is set and not empty; its value when that is a non-negative decimal integer, else -1 (also
 * when none is set). Pure. */
int gp_bind_launcher_local_rank(const gp_bind_env *env);

/* 1 when the launcher's environment says that every rank of the job runs on this node:
 * Open MPI's OMPI_COMM_WORLD_LOCAL_SIZE equals OMPI_COMM_WORLD_SIZE, or Slurm's step has one
 * node (SLURM_STEP_NUM_NODES=1); else 0 (also when neither is set or a value is not a
 * count). Pure. */
int gp_bind_one_node(const gp_bind_env *env);

/* The knobs of *env: GPUPRIM_TRACE_STARTUP, GPUPRIM_FAST_MPI_FINALIZE and GPUPRIM_FREE_AT_EXIT
 * are on for "1" only, GPUPRIM_EARLY_CUDA and GPUPRIM_FAST_MPI_INIT are off for "0" only. env NULL: the
 * defaults. Pure. */
void gp_bind_start_knobs(const gp_bind_env *env, gp_start_knobs *k);

/* Number of entries of a comma-separated list ("0,1,3" → 3, "" → 0, NULL → -1). Entries
 * are counted as they are (no range syntax). Pure. */
int gp_bind_list_count(const char *list);

/* Decides the device of one rank. local_rank: the node-local rank (from
 * MPI_COMM_TYPE_SHARED), or < 0 to take SLURM_LOCALID; local_size: ranks on the node;
 * visible: devices this rank sees (cudaGetDeviceCount; 0 or less: none). Rule: device =
 * local_rank mod visible. Sharing is estimated from the counts: ranks_per_gpu =
 * ceil(local_size / node_gpus), where node_gpus is the count of SLURM_JOB_GPUS when it is
 * set (under --gpus-per-task=1 each rank sees one device, but the node has one per rank),
 * else the visible count. gp_bind_ranks_per_gpu() gives the exact count from the keys of
 * all the node's ranks. Pure: reads only its arguments. Returns 0, or -1 when no local
 * rank is known (choice->device is then -1). */
int gp_bind_choose(int local_rank, int local_size, int visible, const gp_bind_env *env,
                   gp_bind_choice *choice);

/* Exact sharing from the GPU keys of the n ranks of one node (keys[i * stride] is rank i's
 * NUL-terminated key; "" for a rank without a GPU): the largest number of ranks with the
 * same non-empty key (0 when no rank has one). Pure. */
int gp_bind_ranks_per_gpu(const char *keys, size_t stride, int n);

#ifdef __cplusplus
}
#endif
#endif /* GP_BINDING_H */
