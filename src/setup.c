/* setup.c — the start of a gpuprim_mpi run: which backend each rank uses (with the CUDA
 * context made early, startup.h), and the checks of the outputs made before any work: their
 * paths, and the space --out takes. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "job.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gp_path.h"
#include "gpuprim/h5io.h"
#include "startup.h"

/* ---- backend selection --------------------------------------------------------------- */

/* This rank's binding record before the choice: rank, node-local rank and size (node: the
 * ranks of this node, for the caller to free), host, CUDA_VISIBLE_DEVICES (from *env, read
 * here); no device yet. Returns MPI_SUCCESS, or MPI_Comm_split_type's error (no node).
 * Collective. */
static int bind_start(MPI_Comm comm, gp_binding *bind, gp_bind_env *env, MPI_Comm *node)
{
    memset(bind, 0, sizeof *bind);
    MPI_Comm_rank(comm, &bind->rank);
    bind->device = -1;
    const int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, bind->rank, MPI_INFO_NULL,
                                       node);
    if (rc != MPI_SUCCESS) return rc;
    MPI_Comm_rank(*node, &bind->local_rank);
    MPI_Comm_size(*node, &bind->local_size);
    if (gethostname(bind->host, sizeof bind->host - 1) != 0) strcpy(bind->host, "?");
    gp_bind_env_from_process(env);
    bind->cuda_visible_set = env->cuda_visible_devices != NULL;
    snprintf(bind->cuda_visible, sizeof bind->cuda_visible, "%s",
             env->cuda_visible_devices ? env->cuda_visible_devices : "");
    return MPI_SUCCESS;
}

/* The ranks of node (this rank's node) that share this rank's GPU (by PCI bus id, else by
 * gp_bind_choose's key; 0 on the CPU backend), and on rank 0 of comm run->bindings, every
 * rank's binding in rank order. Collective over comm and node. */
static int ranks_on_my_gpu(MPI_Comm comm, MPI_Comm node, const gp_binding *bind,
                           const gp_bind_choice *choice, gp_result_run *run)
{
    int rank, size, mine_per_gpu = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    char key[64] = "", *keys = (char *)calloc((size_t)bind->local_size, sizeof key);
    run->bindings = rank == 0 ? (gp_binding *)calloc((size_t)size, sizeof *bind) : NULL;
    if (!keys || (rank == 0 && !run->bindings)) { /* a few KiB: the collectives need them */
        fprintf(stderr, "gpuprim_mpi: error: rank %d: out of memory for the binding table\n", rank);
        MPI_Abort(comm, gp_exit_status(GP_EXIT_FAIL));
    }
    if (bind->device >= 0)
        snprintf(key, sizeof key, "%s", bind->busid[0] ? bind->busid : choice->gpu_key);
    if (MPI_Allgather(key, (int)sizeof key, MPI_CHAR, keys, (int)sizeof key, MPI_CHAR, node) ==
        MPI_SUCCESS)
        mine_per_gpu = gp_bind_ranks_per_gpu(keys, sizeof key, bind->local_size);
    else if (bind->device >= 0)
        mine_per_gpu = choice->ranks_per_gpu;
    free(keys);
    MPI_Gather(bind, (int)sizeof *bind, MPI_BYTE, run->bindings, (int)sizeof *bind, MPI_BYTE, 0,
               comm);
    return mine_per_gpu;
}

/* This rank's CUDA device among the ndev visible (gp_bind_choose from env into *choice, its
 * index in bind->device), its backend (the context made while MPI_Init ran, when MPI agreed:
 * startup.h), and its name and PCI bus id in bind. Returns the backend, or NULL with msg
 * naming the rank, host, device and CUDA's reason (also left in why). */
static const gp_backend *bind_cuda_device(int rank, int ndev, const gp_bind_env *env,
                                          gp_binding *bind, gp_bind_choice *choice, char *why,
                                          size_t whylen, char *msg, size_t msglen)
{
    gp_bind_choose(bind->local_rank, bind->local_size, ndev, env, choice);
    bind->device = choice->device;
    const int early = gp_early_cuda_take(bind->device, bind->local_rank);
    if (!early) gp_proc_mark(GP_STEP_DEVICE);
    const gp_backend *be = gp_backend_cuda(bind->device, why, whylen);
    if (!be) {
        snprintf(msg, msglen, "rank %d (%s): cannot use CUDA device %d: %s", rank, bind->host,
                 bind->device, why);
        return NULL;
    }
    if (!early) gp_proc_mark(GP_STEP_CONTEXT);
    gp_cuda_device_info(bind->device, bind->device_name, sizeof bind->device_name, bind->busid,
                        sizeof bind->busid);
    return be;
}

int gp_select_backend(MPI_Comm comm, const gp_options *o, const gp_backend **be,
                      gp_binding *bind, gp_result_run *run, char *msg, size_t msglen)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm node;
    gp_bind_env env;
    gp_bind_choice choice;
    memset(&choice, 0, sizeof choice);
    if (bind_start(comm, bind, &env, &node) != MPI_SUCCESS) {
        snprintf(msg, msglen, "MPI_Comm_split_type failed");
        return GP_EXIT_FAIL;
    }

    gp_proc_mark(GP_STEP_LOCAL_RANK);
    int err = 0, fell_back = 0, ndev = 0;
    char why[256] = "";
    *be = NULL;
    if (o->backend != GP_BACKEND_CPU) {
        ndev = gp_cuda_device_count();
        if (ndev > 0) {
            *be = bind_cuda_device(rank, ndev, &env, bind, &choice, why, sizeof why, msg, msglen);
            if (!*be) err = GP_EXIT_DEVICE;
        } else {
            gp_backend_cuda(0, why, sizeof why); /* for the reason */
            if (o->backend == GP_BACKEND_CUDA) {
                err = GP_EXIT_DEVICE;
                snprintf(msg, msglen, "--backend cuda: rank %d (%s): %s", rank, bind->host, why);
            } else {
                fell_back = 1;
            }
        }
    }
    if (!*be && !err) {
        *be = gp_backend_cpu();
        bind->device = -1;
        snprintf(bind->device_name, sizeof bind->device_name, "CPU");
    }
    err = gp_agree(comm, err, msg, msglen);
    if (err) {
        MPI_Comm_free(&node);
        return err;
    }

    /* sharing: ranks of a node with the same GPU */
    int any_fell = 0, per_gpu = 0;
    MPI_Allreduce(&fell_back, &any_fell, 1, MPI_INT, MPI_MAX, comm);
    const int mine_per_gpu = ranks_on_my_gpu(comm, node, bind, &choice, run);
    MPI_Comm_free(&node);
    MPI_Allreduce(&mine_per_gpu, &per_gpu, 1, MPI_INT, MPI_MAX, comm);
    if (rank == 0) {
        if (any_fell)
            fprintf(stderr, "gpuprim_mpi: notice: %s; using the CPU backend (--backend cpu "
                    "chooses it without this notice)\n", why[0] ? why : "no CUDA device visible");
        if (per_gpu > 1 && !o->quiet)
            fprintf(stderr, "gpuprim_mpi: warning: up to %d ranks share one GPU (more ranks than visible GPUs on a node)\n",
                    per_gpu);
    }
    run->ranks = size;
    run->node_ranks = bind->local_size;
    run->backend = (*be)->name;
    run->gpus_visible = ndev;
    run->ranks_per_gpu_max = per_gpu;
    run->mem_share = bind->device >= 0 ? (mine_per_gpu > 0 ? mine_per_gpu : 1)
                                       : (bind->local_size > 0 ? bind->local_size : 1);
    return 0;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* a and b name the same file: the same existing file, or the same name in the same folder
 * (folders compared by realpath) when one does not exist yet */
static int same_target(const char *a, const char *b)
{
    if (same_file(a, b)) return 1;
    char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
    const char *ba, *bb;
    if (gp_path_folder(a, da, sizeof da, &ba) || gp_path_folder(b, db, sizeof db, &bb)) return 0;
    if (!realpath(da, ra) || !realpath(db, rb)) return 0;
    return strcmp(ra, rb) == 0 && strcmp(ba, bb) == 0;
}

int gp_check_outputs(MPI_Comm comm, const gp_options *o, char *msg, size_t msglen)
{
    int rank, err = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        const char *in = o->function_mode ? NULL : o->file;
        if (o->out && in && same_file(o->out, in)) {
            err = GP_EXIT_USAGE;
            snprintf(msg, msglen, "--out %s is the input file", o->out);
        } else if (o->json && in && same_file(o->json, in)) {
            err = GP_EXIT_USAGE;
            snprintf(msg, msglen, "--json %s is the input file", o->json);
        } else if (o->json && o->out && same_target(o->json, o->out)) {
            err = GP_EXIT_USAGE;
            snprintf(msg, msglen, "--json %s is the --out file", o->json);
        } else if (o->out && gp_h5_check_target(o->out, o->force, msg, msglen) != 0) {
            err = GP_EXIT_WRITE;
        } else if (o->json && !gp_json_path_ok(o->json, o->force, msg, msglen)) {
            err = GP_EXIT_WRITE;
        }
    }
    return gp_agree(comm, err, msg, msglen);
}

/* ---- the space --out takes ------------------------------------------------------------ */

uint64_t gp_out_bytes_need(int64_t n, size_t value_bytes, int argsort, size_t payload_bytes)
{
    const uint64_t per = (uint64_t)value_bytes + (argsort ? 8u : 0u) + (uint64_t)payload_bytes;
    const uint64_t count = n > 0 ? (uint64_t)n : 0;
    if (per > 0 && count > (UINT64_MAX - GP_OUT_META_MARGIN) / per) return UINT64_MAX;
    return count * per + GP_OUT_META_MARGIN;
}

/* bytes as "N bytes (X.Y GiB)", or MiB below 1 GiB */
static const char *bytes_text(char *buf, size_t len, uint64_t b)
{
    const int gib = b >= ((uint64_t)1 << 30);
    snprintf(buf, len, "%llu bytes (%.1f %s)", (unsigned long long)b,
             (double)b / (gib ? 1073741824.0 : 1048576.0), gib ? "GiB" : "MiB");
    return buf;
}

int gp_check_out_space(const char *out, uint64_t need, char *msg, size_t msglen)
{
    char dir[PATH_MAX];
    struct statvfs fs;
    if (gp_path_folder(out, dir, sizeof dir, NULL) != 0 || statvfs(dir, &fs) != 0) return 0;
    /* the blocks this user may take: root may also take the file system's reserve */
    const uint64_t blocks = geteuid() == 0 ? (uint64_t)fs.f_bfree : (uint64_t)fs.f_bavail;
    const uint64_t unit = fs.f_frsize ? (uint64_t)fs.f_frsize : (uint64_t)fs.f_bsize;
    const uint64_t avail = unit && blocks > UINT64_MAX / unit ? UINT64_MAX : blocks * unit;
    if (need <= avail) return 0;
    char nt[64], at[64];
    snprintf(msg, msglen, "--out %s needs %s and its file system has %s free; nothing was read "
             "or written", out, bytes_text(nt, sizeof nt, need), bytes_text(at, sizeof at, avail));
    return GP_EXIT_WRITE;
}
