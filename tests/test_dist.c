/* test_dist.c: the launch read from the environment (mlc_dist_launch) and the refusal of a
 * process that is one of several while its MPI world has one (mlc_dist_check_launch), on
 * environments given as lists of NAME=VALUE, without any launcher. */
#include "test_util.h"

#include "dist.h"

/* The environment of the case being tested: NAME=VALUE strings, NULL-terminated. */
static const char *const *fake;

static const char *fake_env(const char *name) {
    size_t n = strlen(name);
    for (const char *const *e = fake; *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

static mlc_launch launch_of(const char *const *env) {
    fake = env;
    return mlc_dist_launch(fake_env);
}

static void batch_script_and_lone_processes_should_be_alone(void **state) {
    (void)state;
    /* The batch script of --ntasks=4: SLURM_NTASKS is the allocation's, no step. */
    const char *batch[] = {"SLURM_NTASKS=4", "SLURM_NPROCS=4", "SLURM_PROCID=0", "SLURM_JOB_ID=9",
                           NULL};
    const char *one_step[] = {"SLURM_STEP_ID=1", "SLURM_STEP_NUM_TASKS=1", "SLURM_NTASKS=1", NULL};
    const char *garbage[] = {"SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=2x", "PMI_SIZE=-3",
                             "OMPI_COMM_WORLD_SIZE=", NULL};
    const char *none[] = {NULL};
    const char *const *cases[] = {batch, one_step, garbage, none};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mlc_launch l = launch_of(cases[i]);
        assert_int_equal(l.tasks, 1);
        assert_int_equal(l.index, 0);
        assert_int_equal(mlc_dist_check_launch(&l, 1, 1, NULL), MLC_OK);
    }
}

/* Environments of several processes: how many, which one, the variable that says so, srun. */
static void launches_should_be_read_from_the_environment(void **state) {
    (void)state;
    static const struct {
        const char *env[5];
        int tasks, index;
        const char *var;
        int slurm;
    } cases[] = {
        /* srun -n 3, task 2 (Slurm 22.05). */
        {{"SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=3", "SLURM_NTASKS=3", "SLURM_PROCID=2"},
         3,
         2,
         "SLURM_STEP_NUM_TASKS",
         1},
        /* An older Slurm without SLURM_STEP_NUM_TASKS: SLURM_NTASKS counts inside a step. */
        {{"SLURM_STEPID=4", "SLURM_NTASKS=2"}, 2, 0, "SLURM_NTASKS", 1},
        /* srun --mpi=pmix: PMIX_RANK and the step's count. */
        {{"SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=2", "PMIX_RANK=1"},
         2,
         1,
         "SLURM_STEP_NUM_TASKS",
         1},
        /* mpirun -n 4 inside a one-task srun step: the MPI launcher's size counts. */
        {{"SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=1", "OMPI_COMM_WORLD_SIZE=4",
          "OMPI_COMM_WORLD_RANK=3"},
         4,
         3,
         "OMPI_COMM_WORLD_SIZE",
         0},
        /* A PMIx rank alone still proves company. */
        {{"PMIX_RANK=5"}, 6, 5, "PMIX_RANK", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mlc_launch l = launch_of(cases[i].env);
        assert_int_equal(l.tasks, cases[i].tasks);
        assert_int_equal(l.index, cases[i].index);
        assert_string_equal(l.var, cases[i].var);
        assert_int_equal(l.slurm, cases[i].slurm);
        /* Joined by MPI (a world of all of them), they run. */
        assert_int_equal(mlc_dist_check_launch(&l, l.tasks, 1, NULL), MLC_OK);
    }
}

static void unjoined_copies_should_be_refused_with_the_fix(void **state) {
    (void)state;
    const char *step[] = {"SLURM_STEP_ID=0", "SLURM_STEP_NUM_TASKS=2", "SLURM_PROCID=1", NULL};
    mlc_launch l = launch_of(step);
    mlc_err err = {0};
    assert_int_equal(mlc_dist_check_launch(&l, 1, 1, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "task 1 of 2"));
    assert_non_null(strstr(err.msg, "srun --mpi=pmix"));
    assert_int_equal(mlc_dist_check_launch(&l, 1, 0, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "built without MPI"));
    const char *mpich[] = {"PMI_SIZE=2", "PMI_RANK=0", NULL};
    l = launch_of(mpich);
    assert_int_equal(mlc_dist_check_launch(&l, 1, 1, &err), MLC_EINVAL);
    assert_non_null(strstr(err.msg, "rank 0 of 2"));
    assert_int_equal(mlc_dist_check_launch(&l, 2, 1, NULL), MLC_OK);
}

/* One process (no launcher): the block gather of items of any size copies this process's block,
 * the whole range, into place in item order, in place too; a broadcast leaves the bytes. The
 * cases with several processes run in tests/cli_mpi.sh (the full-space validation's verdicts). */
typedef struct item24 {
    double a;
    int b;
    char c[12];
} item24;

static void one_process_should_gather_items_in_order(void **state) {
    (void)state;
    assert_int_equal(mlc_dist_size(), 1);
    item24 mine[5], all[5];
    memset(mine, 0, sizeof mine);
    memset(all, 0xff, sizeof all);
    for (int i = 0; i < 5; i++) {
        mine[i].a = 0.5 * i, mine[i].b = -i;
        snprintf(mine[i].c, sizeof mine[i].c, "item %d", i);
    }
    mlc_dist_gather_blocks_bytes(mine, all, 5, sizeof(item24));
    assert_memory_equal(all, mine, sizeof mine);
    mlc_dist_gather_blocks_bytes(all, all, 5, sizeof(item24)); /* in place */
    assert_memory_equal(all, mine, sizeof mine);
    mlc_dist_bcast_bytes(all, sizeof all, 0);
    assert_memory_equal(all, mine, sizeof mine);
    int lo, hi; /* the blocks the gather follows: contiguous, sizes within one */
    int next = 0;
    for (int r = 0; r < 3; r++) {
        mlc_dist_block(5, r, 3, &lo, &hi);
        assert_int_equal(lo, next);
        assert_in_range(hi - lo, 1, 2);
        next = hi;
    }
    assert_int_equal(next, 5);
}

int main(void) {
    unsetenv("MLC_MPI"); /* the refusal's message depends on it */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batch_script_and_lone_processes_should_be_alone),
        cmocka_unit_test(launches_should_be_read_from_the_environment),
        cmocka_unit_test(unjoined_copies_should_be_refused_with_the_fix),
        cmocka_unit_test(one_process_should_gather_items_in_order),
    };
    return cmocka_run_group_tests_name("dist", tests, NULL, NULL);
}
