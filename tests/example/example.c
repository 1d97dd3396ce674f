/* example.c — gpuprim as a library: statistics of a distributed array and a global sort.
 *
 * Every rank builds its shard of a float64 array of N elements (x_i = 100 sin(i)), takes
 * the GPU (CUDA backend) when one is visible and else the CPU backend, computes the
 * shard's statistics on it, combines them over the ranks with gp_stats_allreduce, sorts the
 * shard on the device in the shard buffer of a rank exchange (gp_exchange_create) and
 * merges the shards across the ranks with gp_exchange_run (partners on one node read each
 * other's memory, others go through MPI). Rank 0 prints the count, sum, min, max and
 * whether the result is globally sorted.
 *
 * Build against an installed gpuprim:
 *   CMake:      find_package(gpuprim) ; target_link_libraries(example PRIVATE gpuprim::gpuprim)
 *   pkg-config: cc example.c $(pkg-config --cflags --libs gpuprim) -o example
 * Run:         mpirun -np 4 ./example [N]          (exit 0 when every check passes)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <gpuprim/gpuprim.h>

/* Fails the whole job with a message (an error on one rank would leave the others waiting). */
static void die(const char *what, const gp_backend *be)
{
    fprintf(stderr, "example: %s: %s\n", what, be ? be->last_error() : "");
    MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const int64_t N = argc > 1 ? atoll(argv[1]) : 100003;

    /* backend: a GPU when there is one (real programs use the node-local rank, see
     * gpuprim_mpi), else the CPU twins of the kernels */
    char why[256] = "";
    const gp_backend *be = NULL;
    int ndev = gp_cuda_device_count();
    if (ndev > 0) be = gp_backend_cuda(rank % ndev, why, sizeof why);
    if (!be) be = gp_backend_cpu();

    /* this rank's shard: a contiguous range, m slots so the exchange can fill it; the
     * exchange owns the shard buffer and its receive buffer (collective) */
    int64_t off, cnt;
    gp_shard_range(N, P, rank, &off, &cnt);
    const int64_t m = (N + P - 1) / P;
    gp_exchange_config cfg = {GP_TRANSPORT_AUTO, 8, 0, m, 0, 0}; /* 8-byte keys, no values */
    gp_exchange *x = NULL;
    char msg[512];
    if (gp_exchange_create(MPI_COMM_WORLD, be, &cfg, &x, msg, sizeof msg) != GP_OK) {
        if (rank == 0) fprintf(stderr, "example: %s\n", msg);
        MPI_Finalize();
        return 1;
    }
    if (msg[0] && rank == 0) fprintf(stderr, "example: notice: %s\n", msg); /* fell back to MPI */
    double *host = be->host_alloc((size_t)(m > 0 ? m : 1) * sizeof(double));
    void *dev = gp_exchange_keys(x);
    if (!host) die("allocation", be);
    for (int64_t i = 0; i < cnt; i++) host[i] = 100.0 * sin((double)(off + i));

    /* statistics: per shard on the device, then combined in rank order over MPI */
    gp_stats mine, all;
    if (be->upload(dev, host, (size_t)cnt * sizeof(double))) die("upload", be);
    if (be->stats(GP_F64, dev, cnt, 0, &mine)) die("stats", be);
    if (gp_stats_allreduce(MPI_COMM_WORLD, &mine, &all) != MPI_SUCCESS) die("allreduce", NULL);

    /* global sort: order keys, bitonic sort of the shard, merge exchange over the ranks */
    int64_t nk = cnt;
    if (be->to_keys(GP_F64, GP_ASCENDING, dev, cnt) || be->sort(8, dev, NULL, cnt, 0)) die("local sort", be);
    gp_exchange_run(x, &nk, 0, NULL);
    dev = gp_exchange_keys(x); /* the result may be in the other buffer */
    if (be->from_keys(GP_F64, GP_ASCENDING, dev, nk)) die("from keys", be);
    if (be->download(host, dev, (size_t)nk * sizeof(double))) die("download", be);

    /* checks: each shard ascending, shard boundaries in order, nothing lost */
    int ok = 1;
    for (int64_t i = 1; i < nk; i++) ok &= host[i - 1] <= host[i];
    double first = nk ? host[0] : INFINITY, last = nk ? host[nk - 1] : -INFINITY, prev_last;
    MPI_Status st;
    MPI_Sendrecv(&last, 1, MPI_DOUBLE, rank + 1 < P ? rank + 1 : MPI_PROC_NULL, 0, &prev_last, 1,
                 MPI_DOUBLE, rank > 0 ? rank - 1 : MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st);
    if (rank > 0 && nk > 0) ok &= prev_last <= first;
    int64_t total = 0;
    MPI_Allreduce(&nk, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    ok &= total == N && all.count == N;
    int all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    if (rank == 0) {
        printf("example: %lld float64 values on %d rank%s, backend %s\n", (long long)N, P,
               P == 1 ? "" : "s", be->name);
        printf("  count %lld  sum %.6f  min %.6f  max %.6f\n", (long long)all.count, all.sum,
               gp_key_to_double(GP_F64, all.min_key), gp_key_to_double(GP_F64, all.max_key));
        printf("  globally sorted: %s\n", all_ok ? "yes" : "NO");
    }
    be->host_free(host);
    gp_exchange_destroy(x); /* collective */
    MPI_Finalize();
    return all_ok ? 0 : 1;
}
