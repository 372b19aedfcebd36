/* dist.h: distributing work over processes with MPI, and the serial fallback.
 *
 * Every MPI call of the program lives behind this header (src/dist/dist.c), so the commands read
 * the same with and without MPI. Built without MPI (MLC_HAVE_MPI undefined), or started without
 * an MPI launcher, the process is rank 0 of a world of size 1 and every function below is a
 * cheap no-op or a copy.
 *
 * Model: one process group, MPI_COMM_WORLD. Rank 0 owns the decisions (the optimizer, the
 * files, the terminal); the other ranks compute what rank 0 hands them. All functions marked
 * "collective" must be called by every rank in the same order, or the job hangs.
 *
 * MPI is initialized lazily by mlc_dist_init, and only when the environment shows that an MPI
 * launcher started the process (mpirun/mpiexec of OpenMPI, MPICH/Hydra, Slurm's srun with
 * PMI/PMIx). A plain `modalloco optimize` therefore never pays for MPI start-up (an OpenMPI
 * singleton init costs about a second and spawns a daemon).
 *
 * Errors: MPI's default handler (MPI_ERRORS_ARE_FATAL) stays in place: a failed collective
 * aborts the whole job rather than returning, which is what a batch job wants. mlc_dist_init
 * returns MLC_ETOOL when MPI cannot start.
 */
#ifndef MODALLOCO_DIST_H
#define MODALLOCO_DIST_H

#include <stddef.h>

#include "base.h"

/* Start MPI if a launcher started this process; idempotent (later calls return the first
 * outcome). Refuses (MLC_EINVAL, exit code 2) a process that is one of several a launcher
 * started while its MPI world has one process (mlc_dist_check_launch). MPI is asked for
 * MPI_THREAD_FUNNELED: only the main thread calls MPI, while OpenMP threads run rollouts. */
mlc_status mlc_dist_init(mlc_err *err);

/* Finalize MPI if mlc_dist_init started it (call once, at the end of the program, from the
 * main thread, when no collective is pending). A no-op otherwise. */
void mlc_dist_finalize(void);

/* What the environment says about the launch this process belongs to: how many processes a
 * launcher started together with it, and which one it is. Slurm's srun says it in
 * SLURM_STEP_NUM_TASKS (or SLURM_NTASKS inside a step, SLURM_STEP_ID set; in the batch script
 * itself SLURM_NTASKS is the allocation's and says nothing about this process), MPI launchers in
 * OMPI_COMM_WORLD_SIZE, PMI_SIZE, and by a rank above 0 in OMPI_COMM_WORLD_RANK, PMIX_RANK,
 * PMI_RANK or SLURM_PROCID. Values that are not positive integers are ignored. */
typedef struct mlc_launch {
    int tasks;       /* processes started together (at least index + 1; 1 when none known) */
    int index;       /* this process's rank or task number among them (0 when unknown) */
    const char *var; /* the variable that gave `tasks` or `index` (NULL when none did) */
    int slurm;       /* 1 when srun started it (in a step) and no MPI launcher's size is set */
} mlc_launch;

/* Read the launch from `env` (a getenv; NULL for the process's own environment). */
mlc_launch mlc_dist_launch(const char *(*env)(const char *name));

/* MLC_OK when this process may run: it is alone, or its MPI world holds the launch's processes.
 * Otherwise (several tasks or ranks were started, but the MPI world of this process has size
 * 1: srun without an MPI plugin, an MPI launcher of another MPI, MPI forced off, or a program
 * built without MPI) MLC_EINVAL with a message that names the fix: every copy would run the
 * whole job and write the same files. `world`: the MPI world's size; `compiled`:
 * mlc_dist_compiled(). mlc_dist_init calls this before anything is written. */
mlc_status mlc_dist_check_launch(const mlc_launch *l, int world, int compiled, mlc_err *err);

/* 1 when built with MPI support (MLC_HAVE_MPI). */
int mlc_dist_compiled(void);

/* This process's rank (0-based) and the number of processes; 0 and 1 without MPI. */
int mlc_dist_rank(void);
int mlc_dist_size(void);
/* Number of ranks on this node (sharing memory), to split the cores among them; 1 without
 * MPI. */
int mlc_dist_local_size(void);

/* The half-open block [*lo, *hi) of n items that `rank` of `size` owns: contiguous blocks in
 * rank order whose sizes differ by at most one (the first n % size ranks get one more). */
void mlc_dist_block(int n, int rank, int size, int *lo, int *hi);

/* Collective: rank `root`'s values overwrite everybody's. */
void mlc_dist_bcast_int(int *v, int n, int root);
void mlc_dist_bcast_double(double *x, size_t n, int root);

/* Collective: the block gather matching mlc_dist_block. Every rank passes its own block
 * `mine` (hi - lo values of its block of n items); rank 0 receives all n in item order in
 * `all` (only read on rank 0; may be NULL elsewhere). `mine` and `all` may alias on rank 0 when
 * `mine` == all + lo. */
void mlc_dist_gather_blocks(const double *mine, double *all, int n);

/* Collective: rank `root`'s n bytes overwrite everybody's (plain values only: no pointers). */
void mlc_dist_bcast_bytes(void *p, size_t n, int root);

/* Collective: mlc_dist_gather_blocks for items of `item` bytes each (plain values only), e.g.
 * structs of results; rank 0 receives all n items in item order in `all`. */
void mlc_dist_gather_blocks_bytes(const void *mine, void *all, int n, size_t item);

/* Collective: every rank contributes `k` doubles; rank 0 receives size×k in rank order in
 * `all` (only read on rank 0). */
void mlc_dist_gather_fixed(const double *mine, double *all, int k);

/* Collective: agree on the outcome of a step that every rank ran. Returns MLC_OK when every
 * rank passed MLC_OK; otherwise the status of the lowest failing rank, whose number goes to
 * *first_failed (set to -1 when none failed; may be NULL). Call before any collective that
 * follows fallible work, so that one rank's failure never leaves the others waiting. */
mlc_status mlc_dist_agree(mlc_status local, int *first_failed);

/* End the whole job with `code` (MPI_Abort on MPI_COMM_WORLD when MPI runs, exit() otherwise).
 * For a failure that only this rank saw: print the message first. Does not return. */
_Noreturn void mlc_dist_abort(int code);

/* Block until another rank's mlc_dist_abort ends the job (for ranks that learned through
 * mlc_dist_agree that another rank failed and must not go on, nor exit cleanly before that
 * rank has printed its message). Without MPI, or should the barrier ever complete, exits with
 * `code`. Does not return. */
_Noreturn void mlc_dist_await_abort(int code);

/* Collective timing helper for the benchmark: seconds spent inside the broadcast and gather
 * calls above since the start (on this rank). */
double mlc_dist_comm_seconds(void);

#endif
