/* dist.c: the only file that calls MPI (see dist.h), plus the serial fallback.
 *
 * Without MLC_HAVE_MPI, or when no MPI launcher started the process, the world is one
 * process: broadcasts do nothing, gathers copy, agreement returns the local status.
 */
#include "dist.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MLC_HAVE_MPI
#include <mpi.h>
#endif

static int initialized; /* mlc_dist_init ran (its outcome is init_status) */
static mlc_status init_status;
static mlc_err init_err; /* its message when it failed */
static int mpi_started;  /* we called MPI_Init_thread and owe an MPI_Finalize */
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

static const char *process_env(const char *name) {
    return getenv(name);
}

/* A positive integer from variable `name`, or 0 when it is absent or anything else. */
static int env_count(const char *(*env)(const char *), const char *name) {
    const char *v = env(name);
    if (!v || !*v) return 0;
    char *end;
    long n = strtol(v, &end, 10);
    return *end == 0 && n > 0 && n <= 1 << 24 ? (int)n : 0;
}

mlc_launch mlc_dist_launch(const char *(*env)(const char *name)) {
    if (!env) env = process_env;
    mlc_launch l = {1, 0, NULL, 0};
    const char *step = env("SLURM_STEP_ID");
    if (!step) step = env("SLURM_STEPID");
    /* The batch script's own step has no SLURM_STEP_ID; its SLURM_NTASKS is the allocation's. */
    int in_step = step && *step && isdigit((unsigned char)*step);
    /* Sizes: the MPI launcher's own word first (mpirun inside an allocation), then srun's. */
    static const char *sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS",
                                  "SLURM_NTASKS"};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && !l.var; i++) {
        if (i == 3 && !in_step) continue;
        int n = env_count(env, sizes[i]);
        if (n) l.tasks = n, l.var = sizes[i];
    }
    /* Ranks: a rank above 0 proves company even where no size is given (PMIx). */
    static const char *ranks[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof ranks / sizeof ranks[0]; i++) {
        if (i == 3 && !in_step) continue;
        int r = env_count(env, ranks[i]);
        if (r <= 0) continue;
        l.index = r;
        if (r >= l.tasks) l.tasks = r + 1, l.var = ranks[i];
        break;
    }
    l.slurm = (in_step || env("SLURM_STEP_NUM_TASKS")) && !env("OMPI_COMM_WORLD_SIZE") &&
              !env("PMI_SIZE");
    return l;
}

mlc_status mlc_dist_check_launch(const mlc_launch *l, int world, int compiled, mlc_err *err) {
    if (l->tasks <= 1 || world > 1) return MLC_OK;
    char who[160];
    snprintf(who, sizeof who, "this process is %s %d of %d started together (%s)",
             l->slurm ? "task" : "rank", l->index, l->tasks, l->var ? l->var : "?");
    if (!compiled)
        return mlc_errf(err, MLC_EINVAL,
                        "%s, but this modalloco was built without MPI, so each would run the "
                        "whole job and write the same files: build with MPI (install OpenMPI, "
                        "see docs/cluster.md; `modalloco --version` says \"mpi\"), or start "
                        "one process (%s)",
                        who, l->slurm ? "srun --ntasks=1, \"ntasks\": 1 in a sweep" : "-n 1");
    const char *forced = getenv("MLC_MPI");
    if (forced && !strcmp(forced, "0"))
        return mlc_errf(err, MLC_EINVAL,
                        "%s, but MLC_MPI=0 keeps MPI off, so each would run the whole job and "
                        "write the same files: unset MLC_MPI, or start one process",
                        who);
    if (l->slurm)
        return mlc_errf(err, MLC_EINVAL,
                        "%s, but srun did not join them with MPI (MPI world of 1 process; "
                        "Slurm's MpiDefault is often none), so each would run the whole job "
                        "and write the same files: start them with `srun --mpi=pmix` (`srun "
                        "--mpi=list` shows the plugins; a sweep's \"slurm\": {\"mpi\": ...}), "
                        "or with --ntasks=1",
                        who);
    return mlc_errf(err, MLC_EINVAL,
                    "%s, but MPI did not join them (MPI world of 1 process: a launcher of "
                    "another MPI than the one modalloco was built with?), so each would run "
                    "the whole job and write the same files: use the mpirun of the OpenMPI "
                    "modalloco was built with, or start one process",
                    who);
}

mlc_status mlc_dist_init(mlc_err *err) {
    if (initialized) {
        if (init_status != MLC_OK) mlc_errf(err, init_status, "%s", init_err.msg);
        return init_status;
    }
    initialized = 1;
    init_status = MLC_OK;
#ifdef MLC_HAVE_MPI
    if (launched_by_mpi()) {
        int already = 0;
        MPI_Initialized(&already);
        if (!already) {
            int provided = 0;
            /* FUNNELED: OpenMP threads never call MPI; only the main thread does. */
            if (MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
                init_status = mlc_errf(&init_err, MLC_ETOOL,
                                       "MPI_Init_thread failed; run under mpirun/srun, or "
                                       "set MLC_MPI=0 to run as a single process");
                return mlc_errf(err, init_status, "%s", init_err.msg);
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
    }
#endif
    mlc_launch l = mlc_dist_launch(NULL);
    init_status = mlc_dist_check_launch(&l, world_size, mlc_dist_compiled(), &init_err);
    if (init_status != MLC_OK) mlc_errf(err, init_status, "%s", init_err.msg);
    return init_status;
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

void mlc_dist_bcast_bytes(void *p, size_t n, int root) {
    if (world_size == 1 || n == 0) return;
#ifdef MLC_HAVE_MPI
    double t0 = mlc_now();
    const size_t chunk = (size_t)1 << 30; /* MPI counts are int */
    for (size_t off = 0; off < n; off += chunk)
        MPI_Bcast((char *)p + off, (int)MLC_MIN(chunk, n - off), MPI_BYTE, root, MPI_COMM_WORLD);
    comm_seconds += mlc_now() - t0;
#else
    MLC_UNUSED(p), MLC_UNUSED(root);
#endif
}

/* The block gather of n items of `item` bytes each (doubles travel as MPI_DOUBLE, other items
 * as a contiguous type of bytes: the processes run one program on one kind of machine). */
static void gather_blocks(const void *mine, void *all, int n, size_t item) {
    int lo, hi;
    mlc_dist_block(n, world_rank, world_size, &lo, &hi);
    char *at = all ? (char *)all + (size_t)lo * item : NULL; /* all: rank 0 only */
    if (world_size == 1) {
        if ((const void *)at != mine) memmove(at, mine, (size_t)(hi - lo) * item);
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
    MPI_Datatype type = MPI_DOUBLE;
    if (item != sizeof(double)) {
        MPI_Type_contiguous((int)item, MPI_BYTE, &type);
        MPI_Type_commit(&type);
    }
    /* On rank 0 the own block may already sit in place: MPI forbids aliasing send and
     * receive buffers, so use MPI_IN_PLACE then. */
    const void *send = world_rank == 0 && (const void *)at == mine ? MPI_IN_PLACE : mine;
    MPI_Gatherv(send, hi - lo, type, all, counts, displs, type, 0, MPI_COMM_WORLD);
    if (item != sizeof(double)) MPI_Type_free(&type);
    mlc_free(counts);
    comm_seconds += mlc_now() - t0;
#endif
}

void mlc_dist_gather_blocks(const double *mine, double *all, int n) {
    gather_blocks(mine, all, n, sizeof(double));
}

void mlc_dist_gather_blocks_bytes(const void *mine, void *all, int n, size_t item) {
    gather_blocks(mine, all, n, item);
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
