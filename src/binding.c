/* binding.c — the rank → GPU decision (see binding.h). No MPI, no CUDA: plain inputs. */
#include "binding.h"
#include "tuning.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gp_bind_env_from_process(gp_bind_env *env)
{
    env->cuda_visible_devices = getenv("CUDA_VISIBLE_DEVICES");
    env->slurm_localid = getenv("SLURM_LOCALID");
    env->slurm_step_gpus = getenv("SLURM_STEP_GPUS");
    env->slurm_job_gpus = getenv("SLURM_JOB_GPUS");
    env->ompi_local_rank = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    env->mpich_local_rank = getenv("MPI_LOCALRANKID");
    env->pmi_local_rank = getenv("PMI_LOCAL_RANK");
    env->ompi_world_size = getenv("OMPI_COMM_WORLD_SIZE");
    env->ompi_local_size = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    env->slurm_step_nodes = getenv("SLURM_STEP_NUM_NODES");
    env->trace_startup = getenv("GPUPRIM_TRACE_STARTUP");
    env->early_cuda = getenv("GPUPRIM_EARLY_CUDA");
    env->fast_mpi_init = getenv("GPUPRIM_FAST_MPI_INIT");
    env->fast_mpi_finalize = getenv("GPUPRIM_FAST_MPI_FINALIZE");
    env->free_at_exit = getenv("GPUPRIM_FREE_AT_EXIT");
}

int gp_bind_list_count(const char *list)
{
    if (!list) return -1;
    int n = 0, in_entry = 0;
    for (const char *c = list; *c; c++) {
        if (*c == ',') {
            in_entry = 0;
        } else if (*c != ' ' && !in_entry) {
            in_entry = 1;
            n++;
        }
    }
    return n;
}

/* Copies entry `idx` (0-based; blanks trimmed, empty entries skipped as
 * gp_bind_list_count skips them) of a comma-separated list into out. Returns 0, or -1
 * when the list has no such entry. */
static int list_entry(const char *list, int idx, char *out, size_t outlen)
{
    int k = 0;
    const char *c = list;
    for (;;) {
        while (*c == ' ' || *c == ',') c++;
        if (!*c) return -1;
        const char *start = c;
        while (*c && *c != ',') c++;
        const char *end = c;
        while (end > start && end[-1] == ' ') end--;
        if (k++ == idx) {
            size_t len = (size_t)(end - start);
            if (len >= outlen) len = outlen - 1;
            memcpy(out, start, len);
            out[len] = '\0';
            return 0;
        }
    }
}

/* A node-local rank (SLURM_LOCALID): the integer rule of every knob (gp_knob_int, tuning.h),
 * in [0, 1000000], once the blanks around it are trimmed as around the lists' entries; -1
 * for anything else (and for more than 31 characters between the blanks). */
static int parse_index(const char *s)
{
    if (!s) return -1;
    while (*s == ' ') s++;
    size_t len = strlen(s);
    while (len > 0 && s[len - 1] == ' ') len--;
    char buf[32];
    if (len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    int64_t v = 0;
    return gp_knob_int(buf, 0, 1000000, &v) == 0 ? (int)v : -1;
}

int gp_bind_launcher_local_rank(const gp_bind_env *env)
{
    if (!env) return -1;
    const char *const vars[] = {env->ompi_local_rank, env->mpich_local_rank, env->slurm_localid,
                                env->pmi_local_rank};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (vars[i] && vars[i][0]) return parse_index(vars[i]);
    return -1;
}

int gp_bind_one_node(const gp_bind_env *env)
{
    if (!env) return 0;
    const int world = parse_index(env->ompi_world_size);
    if (world > 0 && parse_index(env->ompi_local_size) == world) return 1;
    return parse_index(env->slurm_step_nodes) == 1;
}

/* 1 when a knob's value is exactly s. */
static int is(const char *v, const char *s) { return v && strcmp(v, s) == 0; }

void gp_bind_start_knobs(const gp_bind_env *env, gp_start_knobs *k)
{
    static const gp_bind_env none;
    if (!env) env = &none;
    k->trace = is(env->trace_startup, "1");
    k->early_cuda = !is(env->early_cuda, "0");
    k->fast_mpi_init = !is(env->fast_mpi_init, "0");
    k->fast_mpi_finalize = is(env->fast_mpi_finalize, "1");
    k->free_at_exit = is(env->free_at_exit, "1");
}

int gp_bind_choose(int local_rank, int local_size, int visible, const gp_bind_env *env,
                   gp_bind_choice *choice)
{
    static const gp_bind_env none;
    if (!env) env = &none;
    memset(choice, 0, sizeof *choice);
    choice->device = -1;
    if (local_rank < 0) local_rank = parse_index(env->slurm_localid);
    choice->local_rank = local_rank;
    if (local_rank < 0) return -1;
    if (local_size <= local_rank) local_size = local_rank + 1;
    if (visible <= 0) return 0;

    /* device = local rank mod visible: under --gpus-per-task=1 (one visible) this is 0 */
    choice->device = local_rank % visible;

    /* identity of that GPU on the node: Slurm's own index when the step's list describes
     * exactly what this rank sees (it holds even where CUDA_VISIBLE_DEVICES is renumbered
     * inside a device cgroup), else the CUDA_VISIBLE_DEVICES entry, else the index */
    const int nstep = gp_bind_list_count(env->slurm_step_gpus);
    const int ncvd = gp_bind_list_count(env->cuda_visible_devices);
    if (nstep == visible &&
        list_entry(env->slurm_step_gpus, choice->device, choice->gpu_key,
                   sizeof choice->gpu_key) == 0) {
        /* taken from SLURM_STEP_GPUS */
    } else if (ncvd >= visible &&
               list_entry(env->cuda_visible_devices, choice->device, choice->gpu_key,
                          sizeof choice->gpu_key) == 0) {
        /* taken from CUDA_VISIBLE_DEVICES */
    } else {
        snprintf(choice->gpu_key, sizeof choice->gpu_key, "%d", choice->device);
    }

    /* GPUs the node's ranks spread over: the job's GPUs on this node when Slurm says so
     * (each rank may see only its own), else what this rank sees */
    const int njob = gp_bind_list_count(env->slurm_job_gpus);
    choice->node_gpus = njob > visible ? njob : visible;
    choice->ranks_per_gpu = (local_size + choice->node_gpus - 1) / choice->node_gpus;
    choice->shared = choice->ranks_per_gpu > 1;
    return 0;
}

int gp_bind_ranks_per_gpu(const char *keys, size_t stride, int n)
{
    int best = 0;
    for (int i = 0; i < n; i++) {
        const char *ki = keys + (size_t)i * stride;
        if (!ki[0]) continue;
        int same = 0;
        for (int j = 0; j < n; j++)
            if (strcmp(ki, keys + (size_t)j * stride) == 0) same++;
        if (same > best) best = same;
    }
    return best;
}
