/* test_optimize_run.c: the optimize job (src/job/optimize_run.h) called without the CLI, on the
 * bundled quadruped with the README demo's actuation (it walks within a few generations), a
 * population of 8, two robust replays and a few generations: the same bits for 1 and 2 threads
 * and across an interruption and --resume, the reported J is the returned parameters' J,
 * restarts return the best of all their runs, and the budget, the restart room and a budget
 * below one generation stop or refuse as docs/config.md says. */
#include "test_util.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "gait.h"
#include "internal/optimize_job.h"
#include "judge.h"
#include "objective.h"
#include "optimize_run.h"
#include "perturb.h"
#include "pipeline.h"
#include "sim.h"

/* One temporary folder for the whole file: the runs' output folders and the shared precompute
 * cache (the first run writes it, the others read the same subspace bits). */
static char root[64];

/* The small job, into root/NAME, with extra KEY=VALUE assignments (NULL-terminated). */
static void small_config(mlc_config *cfg, const char *name, const char *const *extra) {
    static const char *const base[] = {
        "actuation.modes=3", "actuation.amplitude_p=0.8", "actuation.amplitude_bound=combined",
        "actuation.ramp=0", "cmaes.population=8", "cmaes.generations=5", "cmaes.robust_samples=2",
        "cmaes.seed=1", "parallel.threads=2",
        /* the search alone: the full-space validation, which
           returns another candidate, is cli_rerank's */
        "reference.rerank=0", NULL};
    mlc_err err;
    mlc_config_defaults(cfg);
    for (const char *const *a = base; *a; a++)
        assert_int_equal(mlc_config_set(cfg, *a, &err), MLC_OK);
    for (const char *const *a = extra; a && *a; a++)
        if (mlc_config_set(cfg, *a, &err) != MLC_OK) fail_msg("%s: %s", *a, err.msg);
    snprintf(cfg->subspace.cache, sizeof cfg->subspace.cache, "%s/precompute.cache", root);
    snprintf(cfg->output.dir, sizeof cfg->output.dir, "%s/%s", root, name);
    if (mlc_config_validate(cfg, &err) != MLC_OK) fail_msg("%s", err.msg);
}

/* Run the job on cfg, quietly; returns the exit code. */
static int run(const mlc_config *cfg, const char *resume,
               void (*generation)(void *, const mlc_history_row *), mlc_optimize_result *res) {
    mlc_optimize_def def = {0};
    def.config = cfg;
    def.resume = resume;
    def.quiet = 1;
    def.generation = generation;
    return mlc_optimize_run(&def, res);
}

static char *read_output(const char *dir, const char *file) {
    char path[MLC_CONFIG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    return test_read_file(path, NULL);
}

static void assert_same_bits(const mlc_optimize_result *a, const mlc_optimize_result *b) {
    assert_int_equal(a->rc, b->rc);
    assert_int_equal(a->n, b->n);
    assert_memory_equal(a->u, b->u, (size_t)a->n * sizeof(double));
    assert_memory_equal(&a->J, &b->J, sizeof a->J);
    assert_memory_equal(&a->J_robust, &b->J_robust, sizeof a->J_robust);
    assert_int_equal(a->evaluations, b->evaluations);
    char *pa = read_output(a->dir, "params.json"), *pb = read_output(b->dir, "params.json");
    assert_non_null(pa);
    assert_non_null(pb);
    assert_string_equal(pa, pb); /* params.json leaves out output.dir and the threads */
    free(pa);
    free(pb);
}

/* ---- Threads ------------------------------------------------------------------------------ */
static void threads_should_not_change_the_bits(void **state) {
    (void)state;
    static const char *const one[] = {"parallel.threads=1", NULL};
    mlc_config c1, c2;
    small_config(&c1, "threads1", one);
    small_config(&c2, "threads2", NULL);
    mlc_optimize_result r1, r2;
    assert_int_equal(run(&c1, NULL, NULL, &r1), 0);
    assert_int_equal(run(&c2, NULL, NULL, &r2), 0);
    assert_true(r1.written && r2.written);
    assert_true(r1.J < 0); /* it walks, so the robust replays were part of the scores */
    assert_same_bits(&r1, &r2);
    mlc_optimize_result_free(&r1);
    mlc_optimize_result_free(&r2);
}

/* ---- Interruption and --resume ------------------------------------------------------------ */
/* Raises SIGINT once generation `stop_at` is recorded, as a Ctrl-C in the middle of a run: the
 * job finishes that generation, saves the checkpoint and ends with 130. */
/* seen: the latest generation any search of the job reached (a further search of
 * reference.refine, after the first, counts its own from 1). */
static int stop_at, seen;
static void interrupt_after(void *user, const mlc_history_row *row) {
    (void)user;
    if (row->generation > seen) seen = row->generation;
    if (row->generation == stop_at) raise(SIGINT);
}

static void resumed_run_should_equal_the_uninterrupted_one(void **state) {
    (void)state;
    /* With the full-space validation: its candidates travel in the checkpoint, so the resumed
     * run chooses among the same ones. */
    static const char *const six[] = {"cmaes.generations=6", "reference.rerank=6", NULL};
    mlc_config whole, parts;
    small_config(&whole, "whole", six);
    small_config(&parts, "parts", six);
    mlc_optimize_result a, b1, b2;
    assert_int_equal(run(&whole, NULL, NULL, &a), 0);

    stop_at = 3, seen = 0;
    assert_int_equal(run(&parts, NULL, interrupt_after, &b1), 130);
    assert_int_equal(seen, 3);
    assert_false(b1.written);
    char *p = read_output(parts.output.dir, "params.json");
    assert_null(p); /* nothing of a result before the run ends */
    char *ck = read_output(parts.output.dir, "checkpoint.bin");
    assert_non_null(ck);
    free(ck);

    stop_at = -1, seen = 0;
    assert_int_equal(run(&parts, parts.output.dir, interrupt_after, &b2), 0);
    assert_int_equal(seen, 6); /* went on from generation 4 to the end (history.csv below) */
    assert_same_bits(&a, &b2);
    char *ra = read_output(whole.output.dir, "result.json");
    char *rb = read_output(parts.output.dir, "result.json");
    assert_non_null(ra);
    assert_non_null(rb);
    assert_non_null(strstr(ra, "\"rerank\""));
    assert_string_equal(ra, rb);
    free(ra);
    free(rb);
    /* history.csv: the same rows but for the wall-clock column (6th). */
    char *ha = read_output(whole.output.dir, "history.csv");
    char *hb = read_output(parts.output.dir, "history.csv");
    assert_non_null(ha);
    assert_non_null(hb);
    int rows = 0;
    for (char *sa = ha, *sb = hb; *sa && *sb; rows++) {
        char *ea = strchr(sa, '\n'), *eb = strchr(sb, '\n');
        assert_non_null(ea);
        assert_non_null(eb);
        *ea = *eb = '\0';
        char *fa[13], *fb[13];
        int na = 0, nb = 0;
        for (char *t = strtok(sa, ","); t && na < 13; t = strtok(NULL, ","))
            fa[na++] = t;
        for (char *t = strtok(sb, ","); t && nb < 13; t = strtok(NULL, ","))
            fb[nb++] = t;
        assert_int_equal(na, nb);
        for (int i = 0; i < na; i++)
            if (i != 5 || rows == 0) assert_string_equal(fa[i], fb[i]);
        sa = ea + 1, sb = eb + 1;
    }
    assert_int_equal(rows, 7); /* the header and six generations */
    free(ha);
    free(hb);
    mlc_optimize_result_free(&a);
    mlc_optimize_result_free(&b1);
    mlc_optimize_result_free(&b2);
}

/* ---- The reported J ----------------------------------------------------------------------- */
/* A fresh model from cfg (its cached precompute), as the job builds it: the pipeline (free
 * with mlc_pipeline_free), the search space and the objective. */
static void open_model(const mlc_config *cfg, mlc_pipeline *p, mlc_gait_space *g,
                       mlc_objective_settings *obj) {
    mlc_err err;
    memset(p, 0, sizeof *p);
    assert_int_equal(mlc_pipeline_model(p, cfg, &err), MLC_OK);
    assert_int_equal(mlc_pipeline_gait_space(p, cfg, g, &err), MLC_OK);
    mlc_pipeline_objective(p, cfg, obj);
}

static void reported_J_should_be_the_returned_parameters_J(void **state) {
    (void)state;
    mlc_config cfg;
    small_config(&cfg, "replay", NULL);
    mlc_optimize_result r;
    assert_int_equal(run(&cfg, NULL, NULL, &r), 0);
    assert_true(r.found);
    assert_false(r.chose_mean);
    /* The best-ever point's score is the worst of its nominal rollout and its replays. */
    assert_true(r.J <= r.J_robust);
    assert_true(r.J_robust < 0);

    /* A fresh model from the same configuration, the returned parameters decoded and run. */
    mlc_pipeline p;
    mlc_gait_space g;
    mlc_objective_settings obj;
    open_model(&cfg, &p, &g, &obj);
    assert_int_equal(g.n, r.n);
    const size_t mk = (size_t)g.m * (size_t)g.k;
    double *A = malloc(3 * mk * sizeof(double));
    assert_non_null(A);
    mlc_gait_decode(&g, r.u, A, A + mk, A + 2 * mk);
    mlc_actuation act = {g.m, g.k, A, A + mk, A + 2 * mk};
    mlc_rollout *ro;
    assert_int_equal(mlc_rollout_create(p.model, &ro), MLC_OK);
    mlc_rollout_result res;
    assert_int_equal(mlc_rollout_run(ro, &act, &obj, NULL, NULL, &res), MLC_OK);
    assert_memory_equal(&res.J, &r.J, sizeof res.J);

    /* params.json says the same J, to the last bit. */
    char *text = read_output(r.dir, "params.json");
    assert_non_null(text);
    cJSON *pj = cJSON_Parse(text);
    assert_non_null(pj);
    assert_true(cJSON_GetObjectItem(pj, "J")->valuedouble == r.J);
    assert_true(cJSON_GetObjectItem(pj, "J_robust")->valuedouble == r.J_robust);
    assert_string_equal(cJSON_GetObjectItem(pj, "gait")->valuestring, "best");
    cJSON_Delete(pj);
    free(text);
    mlc_rollout_destroy(ro);
    free(A);
    mlc_pipeline_free(&p);
    mlc_optimize_result_free(&r);
}

/* ---- Robust replays in rounds ------------------------------------------------------------ */
/* The generation in which the best-ever score last improved (history rows, 1-based). */
static int best_generation;
static double best_so_far;
static void track_best(void *user, const mlc_history_row *row) {
    (void)user;
    if (row->best_ever_J < best_so_far)
        best_so_far = row->best_ever_J, best_generation = row->generation;
}

/* A candidate's replays stop once one reaches the best score so far, but the candidate that
 * becomes the best-ever must have run all R: its score (J_robust) is the worst of its nominal
 * rollout and all R replays, each seeded as optimize_robust.c seeds it. The candidate's index in
 * its generation is not reported, so every index is tried: exactly one scores J_robust. */
static void best_ever_should_have_run_all_its_replays(void **state) {
    (void)state;
    enum { R = 6, LAMBDA = 8 }; /* rounds: replay 1, 2..3, 4..6 */
    static const char *const extra[] = {"cmaes.robust_samples=6", "cmaes.generations=8", NULL};
    mlc_config cfg;
    small_config(&cfg, "rounds", extra);
    best_so_far = HUGE_VAL, best_generation = 0;
    mlc_optimize_result r;
    assert_int_equal(run(&cfg, NULL, track_best, &r), 0);
    assert_true(r.found && !r.chose_mean && r.J_robust < 0);
    assert_true(best_generation >= 1);

    mlc_pipeline p;
    mlc_gait_space g;
    mlc_objective_settings obj;
    open_model(&cfg, &p, &g, &obj);
    const size_t mk = (size_t)g.m * (size_t)g.k;
    double *A = malloc(6 * mk * sizeof(double));
    assert_non_null(A);
    double *B = A + 3 * mk;
    mlc_gait_decode(&g, r.u, A, A + mk, A + 2 * mk);
    mlc_rollout *ro;
    assert_int_equal(mlc_rollout_create(p.model, &ro), MLC_OK);
    int matches = 0;
    for (int c = 0; c < LAMBDA; c++) {
        double worst = r.J, partial = HUGE_VAL;
        for (int k = 1; k <= R; k++) {
            mlc_rng rng;
            mlc_rng_seed(&rng, mlc_optimize_replay_seed(1, best_generation - 1, c, k));
            mlc_gait_perturb(&rng, g.m, g.k, A, A + mk, A + 2 * mk, B, B + mk, B + 2 * mk);
            mlc_actuation act = {g.m, g.k, B, B + mk, B + 2 * mk};
            mlc_rollout_result res;
            assert_int_equal(mlc_rollout_run(ro, &act, &obj, NULL, NULL, &res), MLC_OK);
            worst = fmax(worst, res.J);
            if (k == 1) partial = worst;
        }
        if (worst != r.J_robust) continue;
        matches++;
        /* The worst came after the first round: a best-ever cut there would have scored
         * `partial`, so this test tells the two apart. */
        assert_true(partial < worst);
    }
    assert_int_equal(matches, 1);
    mlc_rollout_destroy(ro);
    free(A);
    mlc_pipeline_free(&p);
    mlc_optimize_result_free(&r);
}

/* ---- The full-space validation (reference.rerank) ---------------------------------------- */
/* The substitute judge: records the candidates in the order the job replays them and scores
 * each later one better in "full space" (J = -1 - its index), so the candidate that holds is
 * the last credible one, never the reduced model's best (candidate 0) when another is
 * credible. */
#define RERANK_K 6
static double judged_u[RERANK_K][64];
static int njudged, judged_n;
static double substitute_judge(void *user, const double *u, int n) {
    (void)user;
    assert_true(njudged < RERANK_K && n <= 64);
    memcpy(judged_u[njudged], u, (size_t)n * sizeof(double));
    judged_n = n;
    return -1.0 - njudged++;
}

static void rerank_should_return_the_candidate_that_holds(void **state) {
    (void)state;
    static const char *const keys[] = {"cmaes.generations=16",  "cmaes.restarts=2",
                                       "cmaes.restart_stall=2", "cmaes.restart_room=0",
                                       "reference.rerank=6",    NULL};
    mlc_config cfg;
    small_config(&cfg, "rerank", keys);
    mlc_optimize_def def = {0};
    def.config = &cfg;
    def.quiet = 1;
    def.rerank_judge = substitute_judge;
    njudged = 0;
    mlc_optimize_result r;
    assert_int_equal(mlc_optimize_run(&def, &r), 0);
    assert_true(njudged >= 2);
    assert_int_equal(judged_n, r.n);

    char *text = read_output(r.dir, "result.json");
    assert_non_null(text);
    cJSON *rj = cJSON_Parse(text);
    free(text);
    assert_non_null(rj);
    const cJSON *block = cJSON_GetObjectItem(rj, "rerank");
    const cJSON *cands = cJSON_GetObjectItem(block, "candidates");
    assert_int_equal(cJSON_GetArraySize(cands), njudged);
    /* The expected choice: the last candidate whose reduced rollout is credible. */
    int expect = -1;
    for (int i = 0; i < njudged; i++) {
        const cJSON *c = cJSON_GetArrayItem(cands, i);
        assert_true(cJSON_GetObjectItem(c, "J_full")->valuedouble == -1.0 - i);
        assert_true(cJSON_IsNull(cJSON_GetObjectItem(c, "transfer_fraction")));
        if (cJSON_IsTrue(cJSON_GetObjectItem(c, "credible"))) expect = i;
    }
    assert_true(expect > 0); /* another credible candidate than the reduced best */
    const int chosen = cJSON_GetObjectItem(block, "chosen")->valueint;
    assert_int_equal(chosen, expect);
    const cJSON *ce = cJSON_GetArrayItem(cands, chosen);
    /* The job returns exactly that candidate. */
    assert_memory_equal(r.u, judged_u[chosen], (size_t)r.n * sizeof(double));
    assert_true(r.found);

    /* params.json: that candidate's reduced J, its source, and its parameters bit for bit. */
    text = read_output(r.dir, "params.json");
    assert_non_null(text);
    cJSON *pj = cJSON_Parse(text);
    free(text);
    assert_non_null(pj);
    assert_true(cJSON_GetObjectItem(pj, "J")->valuedouble ==
                cJSON_GetObjectItem(ce, "J_reduced")->valuedouble);
    assert_string_equal(cJSON_GetObjectItem(pj, "gait")->valuestring,
                        cJSON_GetObjectItem(ce, "source")->valuestring);
    mlc_err err;
    mlc_pipeline p;
    memset(&p, 0, sizeof p);
    mlc_gait_space g;
    assert_int_equal(mlc_pipeline_model(&p, &cfg, &err), MLC_OK);
    assert_int_equal(mlc_pipeline_gait_space(&p, &cfg, &g, &err), MLC_OK);
    const size_t mk = (size_t)g.m * (size_t)g.k;
    double *A = malloc(3 * mk * sizeof(double));
    assert_non_null(A);
    mlc_gait_decode(&g, judged_u[chosen], A, A + mk, A + 2 * mk);
    const cJSON *params = cJSON_GetObjectItem(pj, "parameters");
    assert_true(cJSON_GetArraySize(params) > 0);
    const cJSON *e;
    cJSON_ArrayForEach(e, params) {
        int mode = cJSON_GetObjectItem(e, "mode")->valueint, i = 0;
        while (i < g.m && p.sub.mode_index[i] != mode)
            i++;
        assert_true(i < g.m);
        const cJSON *sins = cJSON_GetObjectItem(e, "sinusoids");
        assert_int_equal(cJSON_GetArraySize(sins), g.k);
        for (int j = 0; j < g.k; j++) {
            const cJSON *sn = cJSON_GetArrayItem(sins, j);
            const size_t at = (size_t)i * g.k + j;
            assert_true(cJSON_GetObjectItem(sn, "amplitude")->valuedouble == A[at]);
            assert_true(cJSON_GetObjectItem(sn, "period")->valuedouble == A[mk + at]);
            assert_true(cJSON_GetObjectItem(sn, "phase")->valuedouble == A[2 * mk + at]);
        }
    }
    free(A);
    mlc_pipeline_free(&p);
    cJSON_Delete(pj);
    cJSON_Delete(rj);
    mlc_optimize_result_free(&r);
}

/* ---- Restarts ----------------------------------------------------------------------------- */
/* The rows the job recorded, kept by the generation callback. */
static mlc_history_row rows[64];
static int nrows;
static void keep_row(void *user, const mlc_history_row *row) {
    (void)user;
    if (nrows < 64) rows[nrows++] = *row;
}

static void restarts_should_return_the_best_of_all_runs(void **state) {
    (void)state;
    /* A run ends after 2 generations without a better score; then IPOP doubles the
     * population, within 16 x 8 evaluations. */
    static const char *const restarts[] = {"cmaes.generations=16", "cmaes.restarts=2",
                                           "cmaes.restart_stall=2", "cmaes.restart_room=0", NULL};
    mlc_config cfg;
    small_config(&cfg, "restarts", restarts);
    mlc_optimize_result r;
    nrows = 0;
    assert_int_equal(run(&cfg, NULL, keep_row, &r), 0);
    /* The last generations were a restart's, with IPOP's doubled population (a restart that
     * was due when the budget ended counts in r.restarts without a generation). */
    const int last = rows[nrows - 1].restart;
    assert_true(last >= 1);
    assert_true(r.restarts >= last);
    assert_int_equal(rows[nrows - 1].population, 8 << last);
    assert_true(r.evaluations <= 16 * 8); /* the budget in evaluations without cmaes.budget */
    assert_string_equal(r.stop_reason, "budget");
    /* The returned score is the lowest of every generation of every run. */
    double lowest = INFINITY;
    for (int i = 0; i < nrows; i++)
        lowest = fmin(lowest, rows[i].best_J);
    assert_false(r.chose_mean);
    assert_memory_equal(&lowest, &r.J_robust, sizeof lowest);
    mlc_optimize_result_free(&r);
}

/* ---- Budget and restart room -------------------------------------------------------------- */
static mlc_status load_with_budget(void *user, mlc_config *cfg, mlc_err *err) {
    small_config(cfg, "refused", NULL);
    cfg->cmaes.budget = *(const int *)user;
    return mlc_config_validate(cfg, err);
}

static void budget_and_restart_room_should_stop_as_documented(void **state) {
    (void)state;
    mlc_optimize_result r;

    /* A budget below one generation's worst case ((8 + 1) x (2 + 1) rollouts) is refused as a
     * configuration error, before anything is written. */
    int tiny = 20;
    mlc_optimize_def def = {0};
    def.load = load_with_budget;
    def.load_user = &tiny;
    def.quiet = 1;
    assert_int_equal(mlc_optimize_run(&def, &r), 2);
    assert_int_equal(r.status, MLC_EINVAL);
    assert_false(r.written);
    assert_non_null(strstr(r.err.msg, "cmaes.budget"));
    struct stat st;
    char path[MLC_CONFIG_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/refused", root);
    assert_int_not_equal(stat(path, &st), 0);
    mlc_optimize_result_free(&r);

    /* A budget in rollouts: the generations stop where the next one's worst case would not
     * fit beside the final mean's reserve (R + 1 rollouts), never past it. */
    static const char *const budget[] = {"cmaes.budget=60", NULL};
    mlc_config cfg;
    small_config(&cfg, "budget", budget);
    assert_int_equal(run(&cfg, NULL, NULL, &r), 0);
    assert_string_equal(r.stop_reason, "budget");
    assert_true(r.rollouts <= 60 - 3);
    assert_true(r.rollouts + 9 * 3 > 60 - 3); /* and the next generation would not have fit */
    mlc_optimize_result_free(&r);

    /* A restart that has less room than its predecessor spent does not begin. */
    static const char *const room[] = {"cmaes.generations=16", "cmaes.restarts=2",
                                       "cmaes.restart_stall=2", "cmaes.restart_room=100", NULL};
    small_config(&cfg, "room", room);
    nrows = 0;
    assert_int_equal(run(&cfg, NULL, keep_row, &r), 0);
    assert_string_equal(r.stop_reason, "restart_room");
    assert_int_equal(r.restarts, 0);
    assert_true(r.evaluations < 16 * 8);
    assert_int_equal(rows[nrows - 1].restart, 0);
    mlc_optimize_result_free(&r);
}

static int setup(void **state) {
    (void)state;
    snprintf(root, sizeof root, "/tmp/mlc_optimize_run_XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

/* What a gait keeps in the full-space reference, and reference.refine's rule on it: a
 * locomotion gait that keeps its travel but turns from the walking direction there (spot's
 * default seeds 1 and 2 kept 111% and 110% of their travel, 0.3% and 4% of their J) does not
 * hold and is searched for again; a task's J is not held against it; a reduced J that gains
 * nothing leaves the travel to decide. */
static void a_gait_that_turns_away_should_not_hold(void **state) {
    (void)state;
    mlc_judgement j;
    memset(&j, 0, sizeof j);
    j.c.reduced.displacement = 2.64, j.c.full.displacement = 2.94;
    j.c.reduced.J = -2.60, j.c.full.J = -0.0073;
    j.cred.credible = 1;
    const double travel = mlc_judgement_transfer(&j),
                 kept = mlc_judgement_kept(&j, MLC_OBJ_LOCOMOTION);
    assert_true(travel > 1.11 && travel < 1.12);
    assert_true(mlc_judgement_J_share(&j) == -0.0073 / -2.60);
    assert_true(kept == mlc_judgement_J_share(&j));
    assert_true(mlc_judgement_kept(&j, MLC_OBJ_TURN) == travel);
    mlc_config cfg;
    mlc_config_defaults(&cfg);
    assert_true(cfg.reference.refine == MLC_JUDGE_HOLD_SHARE);
    assert_true(mlc_optimize_refine_wanted(&cfg, kept, 1));
    assert_false(mlc_optimize_refine_wanted(&cfg, travel, 1));
    /* the same travel, the heading kept too: it holds */
    j.c.full.J = -2.3;
    assert_true(mlc_judgement_kept(&j, MLC_OBJ_LOCOMOTION) == -2.3 / -2.60);
    assert_false(mlc_optimize_refine_wanted(&cfg, mlc_judgement_kept(&j, MLC_OBJ_LOCOMOTION), 1));
    /* more J than travel kept (better aligned in full space): the travel decides */
    j.c.full.J = -2.9, j.c.full.displacement = 1.0;
    assert_true(mlc_judgement_kept(&j, MLC_OBJ_LOCOMOTION) == 1.0 / 2.64);
    /* a reduced J that does not gain: nothing of it to keep, the travel decides */
    j.c.reduced.J = 0.1;
    assert_true(mlc_judgement_J_share(&j) == 1);
    assert_true(mlc_judgement_kept(&j, MLC_OBJ_LOCOMOTION) == 1.0 / 2.64);
    /* a task does not search again, whatever it kept */
    cfg.objective.kind = MLC_OBJ_TURN;
    assert_false(mlc_optimize_refine_wanted(&cfg, 0, 1));
}

static int teardown(void **state) {
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_should_not_change_the_bits),
        cmocka_unit_test(resumed_run_should_equal_the_uninterrupted_one),
        cmocka_unit_test(reported_J_should_be_the_returned_parameters_J),
        cmocka_unit_test(restarts_should_return_the_best_of_all_runs),
        cmocka_unit_test(budget_and_restart_room_should_stop_as_documented),
        cmocka_unit_test(rerank_should_return_the_candidate_that_holds),
        cmocka_unit_test(best_ever_should_have_run_all_its_replays),
        cmocka_unit_test(a_gait_that_turns_away_should_not_hold),
    };
    return cmocka_run_group_tests_name("optimize_run", tests, setup, teardown);
}
