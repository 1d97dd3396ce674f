/* test_binding.c — the rank → GPU decision (src/binding.c) with faked environments.
 *
 * No MPI, no GPU: gp_bind_choose gets node-local ranks, visible-device counts and
 * environments as plain values (and once through setenv/unsetenv and
 * gp_bind_env_from_process), as mpirun, `srun --gpus-per-task=1` (with and without device
 * cgroups) and `srun --gpus=K` would give them; the launchers' node-local rank and node
 * count read before MPI_Init, and the start and end knobs (startup.h). Exit 0 when every
 * check passes.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binding.h"
#include "test_check.h"

static gp_bind_env env4(const char *cvd, const char *localid, const char *step, const char *job)
{
    gp_bind_env e;
    memset(&e, 0, sizeof e);
    e.cuda_visible_devices = cvd;
    e.slurm_localid = localid;
    e.slurm_step_gpus = step;
    e.slurm_job_gpus = job;
    return e;
}

/* one rank's choice, checked field by field (key NULL: not checked) */
static void expect(const char *what, int lr, int ls, int vis, gp_bind_env e, int dev,
                   const char *key, int rpg, int shared)
{
    gp_bind_choice c;
    gp_bind_choose(lr, ls, vis, &e, &c);
    CHECK(c.device == dev, "%s: local %d/%d, %d visible: device %d, want %d", what, lr, ls, vis,
          c.device, dev);
    if (key)
        CHECK(strcmp(c.gpu_key, key) == 0, "%s: local %d: key '%s', want '%s'", what, lr,
              c.gpu_key, key);
    CHECK(c.ranks_per_gpu == rpg, "%s: local %d: ranks_per_gpu %d, want %d", what, lr,
          c.ranks_per_gpu, rpg);
    CHECK(c.shared == shared, "%s: local %d: shared %d, want %d", what, lr, c.shared, shared);
}

static void test_list_count(void)
{
    CHECK(gp_bind_list_count(NULL) == -1, "NULL list");
    CHECK(gp_bind_list_count("") == 0, "empty list");
    CHECK(gp_bind_list_count(" ") == 0, "blank list");
    CHECK(gp_bind_list_count("0") == 1, "one entry");
    CHECK(gp_bind_list_count("0,1,3") == 3, "three entries");
    CHECK(gp_bind_list_count("0, 1") == 2, "entries with blanks");
    CHECK(gp_bind_list_count("0,,1,") == 2, "empty entries skipped");
    CHECK(gp_bind_list_count("GPU-8a1b,GPU-77ff") == 2, "uuids");
}

static void test_mpirun(void)
{
    gp_bind_env none = env4(NULL, NULL, NULL, NULL);
    char k[8];
    /* 4 ranks, 4 GPUs: one each */
    for (int lr = 0; lr < 4; lr++) {
        snprintf(k, sizeof k, "%d", lr);
        expect("mpirun 4 on 4", lr, 4, 4, none, lr, k, 1, 0);
    }
    /* 4 ranks, 2 GPUs: mod, shared by two */
    for (int lr = 0; lr < 4; lr++) {
        snprintf(k, sizeof k, "%d", lr % 2);
        expect("mpirun 4 on 2", lr, 4, 2, none, lr % 2, k, 2, 1);
    }
    /* 5 ranks, 2 GPUs: up to three on one */
    expect("mpirun 5 on 2", 4, 5, 2, none, 0, "0", 3, 1);
    /* 2 ranks, 8 GPUs: two used, no sharing */
    expect("mpirun 2 on 8", 1, 2, 8, none, 1, "1", 1, 0);
    /* CUDA_VISIBLE_DEVICES narrows and renames: the key is the entry */
    gp_bind_env cvd = env4("2,3", NULL, NULL, NULL);
    expect("CVD 2,3", 0, 2, 2, cvd, 0, "2", 1, 0);
    expect("CVD 2,3", 1, 2, 2, cvd, 1, "3", 1, 0);
    gp_bind_env uu = env4("GPU-aaaa, GPU-bbbb", NULL, NULL, NULL);
    expect("CVD uuids", 3, 4, 2, uu, 1, "GPU-bbbb", 2, 1);
    /* more entries than CUDA found (an invalid one stops CUDA's list): the first ones */
    gp_bind_env longer = env4("0,1,9", NULL, NULL, NULL);
    expect("CVD longer than visible", 1, 2, 2, longer, 1, "1", 1, 0);
    /* CVD shorter than visible cannot describe the devices: the index */
    gp_bind_env shorter = env4("5", NULL, NULL, NULL);
    expect("CVD shorter than visible", 1, 2, 2, shorter, 1, "1", 1, 0);
}

static void test_slurm(void)
{
    /* srun --gpus-per-task=1, 4 tasks on a 4-GPU node, no device cgroup: Slurm gives each
     * task one device (CUDA_VISIBLE_DEVICES = SLURM_STEP_GPUS = its index) */
    char cvd[8];
    for (int lr = 0; lr < 4; lr++) {
        snprintf(cvd, sizeof cvd, "%d", lr);
        gp_bind_env e = env4(cvd, NULL, cvd, "0,1,2,3");
        /* device 0 (what mod gives), never device = local rank; not shared */
        expect("gpus-per-task=1", lr, 4, 1, e, 0, cvd, 1, 0);
    }
    /* the same with a device cgroup: every task sees "0", Slurm's index tells them apart */
    gp_bind_env cg = env4("0", NULL, "3", "0,1,2,3");
    expect("gpus-per-task=1, cgroup", 3, 4, 1, cg, 0, "3", 1, 0);
    /* one visible device for many local ranks, whatever their number */
    for (int lr = 0; lr < 16; lr++) {
        gp_bind_choice c;
        gp_bind_env e = env4("0", NULL, "0", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15");
        gp_bind_choose(lr, 16, 1, &e, &c);
        CHECK(c.device == 0 && !c.shared, "16 tasks, one GPU each: local %d device %d shared %d",
              lr, c.device, c.shared);
    }
    /* srun --gpus=2 -n 4: all tasks see both, two per GPU */
    gp_bind_env two = env4("0,1", NULL, "0,1", "0,1");
    expect("--gpus=2 -n 4", 2, 4, 2, two, 0, "0", 2, 1);
    expect("--gpus=2 -n 4", 3, 4, 2, two, 1, "1", 2, 1);
    /* Slurm lists that do not match what CUDA sees: fall back to CVD, then the index */
    gp_bind_env odd = env4("1", NULL, "0,1", "0,1");
    expect("step list of another size", 0, 2, 1, odd, 0, "1", 1, 0);
    /* local rank unknown to the caller: SLURM_LOCALID */
    gp_bind_env lid = env4(NULL, "5", NULL, NULL);
    gp_bind_choice c;
    CHECK(gp_bind_choose(-1, 8, 8, &lid, &c) == 0 && c.local_rank == 5 && c.device == 5,
          "SLURM_LOCALID 5: local %d device %d", c.local_rank, c.device);
    gp_bind_env badlid = env4(NULL, "x", NULL, NULL);
    CHECK(gp_bind_choose(-1, 8, 8, &badlid, &c) == -1 && c.device == -1 && c.local_rank == -1,
          "bad SLURM_LOCALID accepted");
    CHECK(gp_bind_choose(-1, 8, 8, NULL, &c) == -1 && c.device == -1, "no local rank accepted");
    /* the caller's local rank wins over SLURM_LOCALID */
    CHECK(gp_bind_choose(1, 8, 8, &lid, &c) == 0 && c.local_rank == 1 && c.device == 1,
          "local rank argument ignored");
}

static void test_no_gpu(void)
{
    gp_bind_env e = env4("", NULL, NULL, NULL);
    expect("no device", 0, 4, 0, e, -1, "", 0, 0);
    expect("negative count", 2, 4, -1, e, -1, "", 0, 0);
    gp_bind_choice c;
    /* local_size smaller than local_rank + 1 is corrected, not divided by */
    CHECK(gp_bind_choose(3, 0, 2, NULL, &c) == 0 && c.device == 1 && c.ranks_per_gpu == 2,
          "local_size 0: device %d ranks_per_gpu %d", c.device, c.ranks_per_gpu);
}

static void test_ranks_per_gpu(void)
{
    char keys[5][16];
    const char *a[] = {"0", "1", "0", "1", "0"};
    for (int i = 0; i < 5; i++) snprintf(keys[i], sizeof keys[i], "%s", a[i]);
    CHECK(gp_bind_ranks_per_gpu(&keys[0][0], sizeof keys[0], 5) == 3, "0,1,0,1,0");
    CHECK(gp_bind_ranks_per_gpu(&keys[0][0], sizeof keys[0], 2) == 1, "0,1");
    const char *b[] = {"0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0", "0000:af:00.0", ""};
    for (int i = 0; i < 5; i++) snprintf(keys[i], sizeof keys[i], "%s", b[i]);
    CHECK(gp_bind_ranks_per_gpu(&keys[0][0], sizeof keys[0], 5) == 1, "distinct bus ids");
    for (int i = 0; i < 5; i++) keys[i][0] = '\0';
    CHECK(gp_bind_ranks_per_gpu(&keys[0][0], sizeof keys[0], 5) == 0, "no GPUs");
    CHECK(gp_bind_ranks_per_gpu(&keys[0][0], sizeof keys[0], 0) == 0, "no ranks");
}

static void test_process_env(void)
{
    gp_bind_env e;
    setenv("CUDA_VISIBLE_DEVICES", "3", 1);
    setenv("SLURM_LOCALID", "2", 1);
    setenv("SLURM_STEP_GPUS", "3", 1);
    setenv("SLURM_JOB_GPUS", "0,1,2,3", 1);
    gp_bind_env_from_process(&e);
    CHECK(e.cuda_visible_devices && strcmp(e.cuda_visible_devices, "3") == 0, "getenv CVD");
    CHECK(e.slurm_localid && strcmp(e.slurm_localid, "2") == 0, "getenv SLURM_LOCALID");
    CHECK(e.slurm_step_gpus && strcmp(e.slurm_step_gpus, "3") == 0, "getenv SLURM_STEP_GPUS");
    CHECK(e.slurm_job_gpus && strcmp(e.slurm_job_gpus, "0,1,2,3") == 0, "getenv SLURM_JOB_GPUS");
    gp_bind_choice c;
    gp_bind_choose(-1, 4, 1, &e, &c);
    CHECK(c.local_rank == 2 && c.device == 0 && strcmp(c.gpu_key, "3") == 0 && !c.shared,
          "process env: local %d device %d key %s shared %d", c.local_rank, c.device, c.gpu_key,
          c.shared);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "8", 1);
    setenv("GPUPRIM_EARLY_CUDA", "0", 1);
    gp_bind_env_from_process(&e);
    gp_start_knobs k;
    gp_bind_start_knobs(&e, &k);
    CHECK(gp_bind_launcher_local_rank(&e) == 1 && gp_bind_one_node(&e) && !k.early_cuda,
          "getenv: the launcher's variables and the knobs");
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    unsetenv("GPUPRIM_EARLY_CUDA");
    unsetenv("CUDA_VISIBLE_DEVICES");
    unsetenv("SLURM_LOCALID");
    unsetenv("SLURM_STEP_GPUS");
    unsetenv("SLURM_JOB_GPUS");
    gp_bind_env_from_process(&e);
    CHECK(!e.cuda_visible_devices && !e.slurm_localid && !e.slurm_step_gpus && !e.slurm_job_gpus,
          "unset variables read as NULL");
}

/* the node-local rank before MPI_Init: the launchers' variables in their order */
static void test_launcher_local_rank(void)
{
    gp_bind_env e;
    memset(&e, 0, sizeof e);
    CHECK(gp_bind_launcher_local_rank(&e) == -1, "no variable: unknown");
    CHECK(gp_bind_launcher_local_rank(NULL) == -1, "NULL env: unknown");
    e.pmi_local_rank = "6";
    CHECK(gp_bind_launcher_local_rank(&e) == 6, "PMI_LOCAL_RANK alone");
    e.slurm_localid = "5";
    CHECK(gp_bind_launcher_local_rank(&e) == 5, "SLURM_LOCALID before PMI_LOCAL_RANK");
    e.mpich_local_rank = "4";
    CHECK(gp_bind_launcher_local_rank(&e) == 4, "MPI_LOCALRANKID before SLURM_LOCALID");
    e.ompi_local_rank = "3";
    CHECK(gp_bind_launcher_local_rank(&e) == 3, "OMPI_COMM_WORLD_LOCAL_RANK first");
    e.ompi_local_rank = "";
    CHECK(gp_bind_launcher_local_rank(&e) == 4, "an empty variable counts as unset");
    e.mpich_local_rank = "x1";
    CHECK(gp_bind_launcher_local_rank(&e) == -1, "a malformed first value: unknown, no guess");
    e.mpich_local_rank = "-2";
    CHECK(gp_bind_launcher_local_rank(&e) == -1, "a negative value: unknown");
    e.mpich_local_rank = "12 ";
    CHECK(gp_bind_launcher_local_rank(&e) == 12, "trailing blanks");
    /* the early device then follows the one rule: local rank mod visible */
    memset(&e, 0, sizeof e);
    e.ompi_local_rank = "5";
    gp_bind_choice c;
    const int lr = gp_bind_launcher_local_rank(&e);
    CHECK(gp_bind_choose(lr, lr + 1, 4, &e, &c) == 0 && c.device == 1,
          "early choice of local rank 5 on 4 GPUs: device %d", c.device);
}

/* every rank on this node, as the launcher says it */
static void test_one_node(void)
{
    gp_bind_env e;
    memset(&e, 0, sizeof e);
    CHECK(!gp_bind_one_node(&e) && !gp_bind_one_node(NULL), "no variable: not known");
    e.ompi_world_size = "4";
    e.ompi_local_size = "4";
    CHECK(gp_bind_one_node(&e), "Open MPI: 4 of 4 on this node");
    e.ompi_local_size = "2";
    CHECK(!gp_bind_one_node(&e), "Open MPI: 2 of 4 on this node");
    e.ompi_local_size = NULL;
    CHECK(!gp_bind_one_node(&e), "Open MPI: no local size");
    e.ompi_world_size = "0";
    e.ompi_local_size = "0";
    CHECK(!gp_bind_one_node(&e), "a world of 0 ranks");
    memset(&e, 0, sizeof e);
    e.slurm_step_nodes = "1";
    CHECK(gp_bind_one_node(&e), "Slurm: a step on one node");
    e.slurm_step_nodes = "2";
    CHECK(!gp_bind_one_node(&e), "Slurm: a step on two nodes");
    e.slurm_step_nodes = "1x";
    CHECK(!gp_bind_one_node(&e), "Slurm: a malformed node count");
}

static void test_start_knobs(void)
{
    gp_start_knobs k;
    gp_bind_start_knobs(NULL, &k);
    CHECK(!k.trace && k.early_cuda && k.fast_mpi_init && !k.fast_mpi_finalize && !k.free_at_exit,
          "the defaults");
    gp_bind_env e;
    memset(&e, 0, sizeof e);
    e.trace_startup = "1";
    e.early_cuda = "0";
    e.fast_mpi_init = "0";
    e.fast_mpi_finalize = "1";
    e.free_at_exit = "1";
    gp_bind_start_knobs(&e, &k);
    CHECK(k.trace && !k.early_cuda && !k.fast_mpi_init && k.fast_mpi_finalize && k.free_at_exit,
          "every knob turned");
    e.trace_startup = "yes";
    e.early_cuda = "1";
    e.fast_mpi_init = "";
    e.fast_mpi_finalize = "yes";
    e.free_at_exit = "0";
    gp_bind_start_knobs(&e, &k);
    CHECK(!k.trace && k.early_cuda && k.fast_mpi_init && !k.fast_mpi_finalize && !k.free_at_exit,
          "only \"1\" turns a knob on, only \"0\" off");
}

int main(void)
{
    test_list_count();
    test_mpirun();
    test_slurm();
    test_no_gpu();
    test_ranks_per_gpu();
    test_process_env();
    test_launcher_local_rank();
    test_one_node();
    test_start_knobs();
    return gp_check_done(NULL);
}
