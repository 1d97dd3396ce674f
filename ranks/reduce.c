/* reduce.c — the reductions over ranks: the statistics record combined in rank order, and
 * the exact accumulators added (exchange.h). */
#include "gpuprim/exchange.h"

#include "gpuprim/exact_sum.h"

/* MPI user function: inout[i] = in[i] (+) inout[i], where `in` comes from the lower ranks
 * (MPI keeps operand order for non-commutative operations). */
static void stats_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    gp_stats *a = (gp_stats *)in, *b = (gp_stats *)inout;
    for (int i = 0; i < *len; i++) b[i] = gp_stats_combine(&a[i], &b[i]);
}

/* MPI_Reduce to `root` (root >= 0) or MPI_Allreduce (root < 0) of one record of `bytes`
 * bytes with the user operation fn (commute: MPI_Op_create's flag). The datatype and the
 * operation are created and freed here. Returns an MPI error code. */
static int reduce_record(MPI_Comm comm, const void *in, void *out, size_t bytes,
                         MPI_User_function *fn, int commute, int root)
{
    MPI_Datatype t;
    MPI_Op op;
    int rc = MPI_Type_contiguous((int)bytes, MPI_BYTE, &t);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&t);
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Op_create(fn, commute, &op);
    if (rc == MPI_SUCCESS) {
        rc = root >= 0 ? MPI_Reduce(in, out, 1, t, op, root, comm)
                       : MPI_Allreduce(in, out, 1, t, op, comm);
        MPI_Op_free(&op);
    }
    MPI_Type_free(&t);
    return rc;
}

int gp_stats_reduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total, int root)
{
    gp_stats out = *mine; /* what ranks other than root get back */
    int rc = reduce_record(comm, mine, &out, sizeof out, stats_op, 0 /* rank order */, root);
    *total = out;
    return rc;
}

int gp_stats_allreduce(MPI_Comm comm, const gp_stats *mine, gp_stats *total)
{
    return reduce_record(comm, mine, total, sizeof *total, stats_op, 0 /* rank order */, -1);
}

/* ---- exact accumulators ---------------------------------------------------------------- */

/* MPI user function: inout[i] += in[i] with exact limb additions (any order gives the same
 * bits). */
static void superacc_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    gp_superacc *a = (gp_superacc *)in, *b = (gp_superacc *)inout;
    for (int i = 0; i < *len; i++) gp_superacc_add(&b[i], &a[i]);
}

int gp_superacc_allreduce(MPI_Comm comm, const gp_superacc *mine, gp_superacc *total)
{
    return reduce_record(comm, mine, total, sizeof *total, superacc_op, 1 /* exact */, -1);
}
