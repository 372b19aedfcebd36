/* dist.c: the only file that calls MPI (see dist.h), plus the serial fallback.
 *
 * Without MLC_HAVE_MPI, or when no MPI launcher started the process, the world is one
 * process: broadcasts do nothing, gathers copy, agreement returns the local status.
 */
#include "modalloco/dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MLC_HAVE_MPI
#include <mpi.h>
#endif

static int initialized; /* mlc_dist_init ran (its outcome is init_status) */
static mlc_status init_status;
static int mpi_started; /* we called MPI_Init_thread and owe an MPI_Finalize */
static int world_rank, world_size = 1, local_size = 1;
static double comm_seconds;

int mlc_dist_compiled(void) {
#ifdef MLC_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

#ifdef MLC_HAVE_MPI
/* Did an MPI launcher start us? Each launcher family leaves its own variables: OpenMPI's
 * mpirun (OMPI_COMM_WORLD_SIZE), PMIx servers such as OpenMPI 5 and `srun --mpi=pmix`
 * (PMIX_RANK), MPICH/Hydra and `srun --mpi=pmi2` (PMI_SIZE, PMI_RANK). MLC_MPI=1 forces MPI
 * on (e.g. an unusual launcher), MLC_MPI=0 off. */
static int launched_by_mpi(void) {
    const char *force = getenv("MLC_MPI");
    if (force && *force) return strcmp(force, "0") != 0;
    static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}
#endif

mlc_status mlc_dist_init(mlc_err *err) {
    if (initialized) {
        if (init_status != MLC_OK) mlc_errf(err, init_status, "MPI could not be started");
        return init_status;
    }
    initialized = 1;
    init_status = MLC_OK;
#ifdef MLC_HAVE_MPI
    if (!launched_by_mpi()) return MLC_OK;
    int already = 0;
    MPI_Initialized(&already);
    if (!already) {
        int provided = 0;
        /* FUNNELED: OpenMP threads never call MPI; only the main thread does. */
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
            init_status = MLC_ETOOL;
            return mlc_errf(err, MLC_ETOOL,
                            "MPI_Init_thread failed; run under mpirun/srun, or "
                            "set MLC_MPI=0 to run as a single process");
        }
        mpi_started = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) ==
        MPI_SUCCESS) {
        MPI_Comm_size(node, &local_size);
        MPI_Comm_free(&node);
    }
#else
    MLC_UNUSED(err);
#endif
    return MLC_OK;
}

void mlc_dist_finalize(void) {
#ifdef MLC_HAVE_MPI
    if (mpi_started) {
        int done = 0;
        MPI_Finalized(&done);
        if (!done) MPI_Finalize();
        mpi_started = 0;
    }
#endif
}

int mlc_dist_rank(void) {
    return world_rank;
}
int mlc_dist_size(void) {
    return world_size;
}
int mlc_dist_local_size(void) {
    return local_size;
}
double mlc_dist_comm_seconds(void) {
    return comm_seconds;
}

void mlc_dist_block(int n, int rank, int size, int *lo, int *hi) {
    int base = n / size, extra = n % size;
    *lo = rank * base + MLC_MIN(rank, extra);
    *hi = *lo + base + (rank < extra);
}

void mlc_dist_bcast_int(int *v, int n, int root) {
    if (world_size == 1) return;
#ifdef MLC_HAVE_MPI
    double t0 = mlc_now();
    MPI_Bcast(v, n, MPI_INT, root, MPI_COMM_WORLD);
    comm_seconds += mlc_now() - t0;
#else
    MLC_UNUSED(v), MLC_UNUSED(n), MLC_UNUSED(root);
#endif
}

void mlc_dist_bcast_double(double *x, size_t n, int root) {
    if (world_size == 1 || n == 0) return;
#ifdef MLC_HAVE_MPI
    double t0 = mlc_now();
    /* MPI counts are int: send in chunks so any size works. */
    const size_t chunk = (size_t)1 << 28;
    for (size_t off = 0; off < n; off += chunk)
        MPI_Bcast(x + off, (int)MLC_MIN(chunk, n - off), MPI_DOUBLE, root, MPI_COMM_WORLD);
    comm_seconds += mlc_now() - t0;
#else
    MLC_UNUSED(x), MLC_UNUSED(root);
#endif
}

void mlc_dist_gather_blocks(const double *mine, double *all, int n) {
    int lo, hi;
    mlc_dist_block(n, world_rank, world_size, &lo, &hi);
    if (world_size == 1) {
        if (all + lo != mine) memmove(all + lo, mine, (size_t)(hi - lo) * sizeof(double));
        return;
    }
#ifdef MLC_HAVE_MPI
    double t0 = mlc_now();
    /* Counts and displacements follow from mlc_dist_block (one int each per rank; the
     * allocation is nothing next to a generation of rollouts). */
    int *counts = NULL, *displs = NULL;
    if (world_rank == 0) {
        counts = mlc_malloc(2 * (size_t)world_size * sizeof(int));
        if (!counts) {
            fprintf(stderr, "modalloco: error: out of memory gathering results\n");
            mlc_dist_abort(1);
        }
        displs = counts + world_size;
        for (int r = 0; r < world_size; r++) {
            int a, b;
            mlc_dist_block(n, r, world_size, &a, &b);
            counts[r] = b - a;
            displs[r] = a;
        }
    }
    /* On rank 0 the own block may already sit in place: MPI forbids aliasing send and
     * receive buffers, so use MPI_IN_PLACE then. */
    const void *send = world_rank == 0 && mine == all + lo ? MPI_IN_PLACE : mine;
    MPI_Gatherv(send, hi - lo, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    mlc_free(counts);
    comm_seconds += mlc_now() - t0;
#endif
}

void mlc_dist_gather_fixed(const double *mine, double *all, int k) {
    if (world_size == 1) {
        if (all != mine) memmove(all, mine, (size_t)k * sizeof(double));
        return;
    }
#ifdef MLC_HAVE_MPI
    double t0 = mlc_now();
    MPI_Gather(mine, k, MPI_DOUBLE, all, k, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    comm_seconds += mlc_now() - t0;
#endif
}

mlc_status mlc_dist_agree(mlc_status local, int *first_failed) {
    if (first_failed) *first_failed = local != MLC_OK ? world_rank : -1;
    if (world_size == 1) return local;
#ifdef MLC_HAVE_MPI
    /* The lowest failing rank (size when none), then that rank's status from it. */
    int mine = local != MLC_OK ? world_rank : world_size, first = world_size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == world_size) {
        if (first_failed) *first_failed = -1;
        return MLC_OK;
    }
    int status = (int)local;
    MPI_Bcast(&status, 1, MPI_INT, first, MPI_COMM_WORLD);
    if (first_failed) *first_failed = first;
    return (mlc_status)status;
#else
    return local;
#endif
}

_Noreturn void mlc_dist_abort(int code) {
    fflush(stdout);
    fflush(stderr);
#ifdef MLC_HAVE_MPI
    if (world_size > 1) MPI_Abort(MPI_COMM_WORLD, code ? code : 1);
#endif
    exit(code);
}

_Noreturn void mlc_dist_await_abort(int code) {
    fflush(stdout);
    fflush(stderr);
#ifdef MLC_HAVE_MPI
    /* The failing rank never enters this barrier: its MPI_Abort ends us here. */
    if (world_size > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
    exit(code);
}
