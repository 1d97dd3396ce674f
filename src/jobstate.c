/* jobstate.c — the file job's small services under its phases (jobstate.h): the exchange
 * transport the job asks for and the rank exchange a sort creates; the out-of-core sort's
 * host buffers as the phases see them. */
#define _POSIX_C_SOURCE 200809L
#include "jobstate.h"

#include <stdio.h>

#include "ooc.h"
#include "phases.h"

gp_transport gp_job_transport(gp_transport_choice t, int host_memory)
{
    if (t == GP_TRANSPORT_OPT_SHARED) return GP_TRANSPORT_SHARED;
    if (t == GP_TRANSPORT_OPT_MPI || host_memory) return GP_TRANSPORT_MPI;
    return GP_TRANSPORT_AUTO;
}

/* The rank exchange of a sort on P > 1 ranks (exchange.h) on backend be's memory: its
 * buffers (shard and receive buffer of m keys, and of m positions with pairs) and its
 * transport (--transport, as gp_job_transport decides; GPUPRIM_FAULT's xsetup and xstep
 * hooks). A shared transport that falls back to MPI under auto gives one notice from rank
 * 0. */
int gp_job_create_exchange(gp_job *j, const gp_backend *be)
{
    const int step_fault = gp_fault_hits(&j->fault, j->rank, gp_phase_fault(GP_PH_XSTEP));
    gp_exchange_config cfg = {gp_job_transport(j->o->transport, device_is_host(be)),
                              (int)j->sz, j->pairs, j->m,
                              gp_fault_hits(&j->fault, j->rank, gp_phase_fault(GP_PH_XSETUP)),
                              step_fault ? (j->fault.kill ? 2 : 1) : 0};
    char why[1024];
    const int rc = gp_exchange_create(j->comm, be, &cfg, &j->xchg, why, sizeof why);
    if (rc == GP_OK) {
        if (why[0] && j->rank == 0) {
            fprintf(stderr, "gpuprim_mpi: notice: %s\n", why);
            fflush(stderr);
        }
        return 0;
    }
    const int named = j->o->transport == GP_TRANSPORT_OPT_SHARED && rc != GP_ENOMEM;
    snprintf(j->msg, j->msglen, "%s%s", named ? "--transport shared: " : "", why);
    return GP_EXIT_DEVICE;
}

/* ---- out of core: the host buffers ------------------------------------------------------ */

void *gp_ooc_keys(const gp_job *j)
{
    return j->xchg ? gp_exchange_keys(j->xchg) : j->ooc->hk[j->ooc->cur];
}
uint64_t *gp_ooc_vals(const gp_job *j)
{
    return j->xchg ? gp_exchange_values(j->xchg) : j->ooc->hv[j->ooc->cur];
}
void *gp_ooc_spare_keys(const gp_job *j)
{
    return j->xchg ? gp_exchange_spare_keys(j->xchg) : j->ooc->hk[j->ooc->cur ^ 1];
}
uint64_t *gp_ooc_spare_vals(const gp_job *j)
{
    return j->xchg ? gp_exchange_spare_values(j->xchg) : j->ooc->hv[j->ooc->cur ^ 1];
}
