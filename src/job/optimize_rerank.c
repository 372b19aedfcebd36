/* optimize_rerank.c: the full-space validation of optimize (reference.rerank, docs/method.md
 * "One recipe for any body"). The optimizer exploits the coarse reduced model: its best gait
 * often keeps little of its travel in the full-space reference, while another good candidate
 * of the same run keeps more. So before returning, the job replays up to K distinct
 * candidates in the reference (judge.h) and returns the credible one that holds best.
 *
 * The polish comes first: candidate 0 is the gait the job returns without the validation,
 * polished, so whatever is returned is a gait whose full-space replay was measured. The other
 * candidates are not polished (a polish per candidate would cost more than the replays).
 *
 * Everything runs on rank 0, after the generations, from values every process count gives
 * alike, so the choice is the same bits for any number of processes and threads. The runs'
 * and the generations' bests travel in the checkpoint, so a resumed run chooses among the same
 * candidates as an uninterrupted one. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "dist.h"
#include "internal/optimize_job.h"
#include "judge.h"
#include "output.h"

/* ---- Candidates left by the generations ----------------------------------------------------- */
/* Zeroed: the checkpoint stores every slot, filled or not, and its bytes must be defined. */
static mlc_status alloc_candidates(optimize_run *o) {
    const int n = o->g.n, K = MLC_REFERENCE_RERANK_MAX;
    o->nruns = o->cfg.cmaes.restarts + 1;
    o->run_x = mlc_calloc((size_t)o->nruns * (size_t)n, sizeof(double));
    o->run_f = mlc_calloc((size_t)o->nruns, sizeof(double));
    o->ring_x = mlc_calloc((size_t)K * (size_t)n, sizeof(double));
    o->ring_f = mlc_calloc((size_t)K, sizeof(double));
    o->ring_gen = mlc_calloc((size_t)K, sizeof(int));
    if (!o->run_x || !o->run_f || !o->ring_x || !o->ring_f || !o->ring_gen)
        return mlc_optimize_oom(o);
    for (int r = 0; r < o->nruns; r++)
        o->run_f[r] = INFINITY;
    o->ring_len = o->ring_next = 0;
    return MLC_OK;
}

mlc_status mlc_optimize_rerank_note(optimize_run *o, const double *X, int lam) {
    const int n = o->g.n, K = MLC_REFERENCE_RERANK_MAX;
    mlc_status s;
    if (!o->run_x && (s = alloc_candidates(o)) != MLC_OK) return s;
    int b = -1;
    for (int c = 0; c < lam; c++)
        if (isfinite(o->f[c]) && (b < 0 || o->f[c] < o->f[b])) b = c;
    if (b < 0) return MLC_OK; /* nothing scored: no candidate */
    const double *x = X + (size_t)b * n;
    const int run = MLC_MIN(mlc_cmaes_restarts_done(o->es), o->nruns - 1);
    if (o->f[b] < o->run_f[run]) {
        o->run_f[run] = o->f[b];
        memcpy(o->run_x + (size_t)run * n, x, (size_t)n * sizeof(double));
    }
    const int slot = o->ring_next;
    memcpy(o->ring_x + (size_t)slot * n, x, (size_t)n * sizeof(double));
    o->ring_f[slot] = o->f[b];
    o->ring_gen[slot] = mlc_cmaes_generation(o->es);
    o->ring_next = (slot + 1) % K;
    o->ring_len = MLC_MIN(o->ring_len + 1, K);
    return MLC_OK;
}

/* The candidates in the checkpoint: five int32 (runs, n, K, ring_len, ring_next), then run_f,
 * run_x, ring_f as doubles, ring_gen as int32, ring_x as doubles, in native byte order. */
#define CANDIDATES_HEADER 5

static size_t candidates_bytes(int nruns, int n, int K) {
    return CANDIDATES_HEADER * sizeof(int32_t) +
           ((size_t)nruns * (size_t)(n + 1) + (size_t)K * (size_t)(n + 1)) * sizeof(double) +
           (size_t)K * sizeof(int32_t);
}

mlc_status mlc_optimize_rerank_save(optimize_run *o, unsigned char **blob, size_t *len) {
    *blob = NULL, *len = 0;
    if (!o->run_x) return MLC_OK;
    const int n = o->g.n, K = MLC_REFERENCE_RERANK_MAX;
    const size_t bytes = candidates_bytes(o->nruns, n, K);
    unsigned char *b = mlc_malloc(bytes), *p = b;
    if (!b) return mlc_optimize_oom(o);
    const int32_t head[CANDIDATES_HEADER] = {o->nruns, n, K, o->ring_len, o->ring_next};
    memcpy(p, head, sizeof head), p += sizeof head;
    memcpy(p, o->run_f, (size_t)o->nruns * sizeof(double)), p += (size_t)o->nruns * sizeof(double);
    memcpy(p, o->run_x, (size_t)o->nruns * (size_t)n * sizeof(double));
    p += (size_t)o->nruns * (size_t)n * sizeof(double);
    memcpy(p, o->ring_f, (size_t)K * sizeof(double)), p += (size_t)K * sizeof(double);
    for (int i = 0; i < K; i++) {
        const int32_t g = o->ring_gen[i];
        memcpy(p, &g, sizeof g), p += sizeof g;
    }
    memcpy(p, o->ring_x, (size_t)K * (size_t)n * sizeof(double));
    *blob = b, *len = bytes;
    return MLC_OK;
}

mlc_status mlc_optimize_rerank_load(optimize_run *o, const unsigned char *blob, size_t len) {
    if (len == 0) return MLC_OK; /* no candidates yet, or none kept */
    const int n = o->g.n, K = MLC_REFERENCE_RERANK_MAX;
    int32_t head[CANDIDATES_HEADER];
    if (len >= sizeof head) memcpy(head, blob, sizeof head);
    if (len < sizeof head || head[0] != o->cfg.cmaes.restarts + 1 || head[1] != n || head[2] != K ||
        head[3] < 0 || head[3] > K || head[4] < 0 || head[4] >= K ||
        len != candidates_bytes(head[0], n, K))
        return mlc_errf(&o->err, MLC_EPARSE,
                        "--resume: %s: the full-space validation's candidates do not fit this "
                        "configuration (corrupt checkpoint)",
                        o->path);
    mlc_status s;
    if (!o->run_x && (s = alloc_candidates(o)) != MLC_OK) return s;
    const unsigned char *p = blob + sizeof head;
    memcpy(o->run_f, p, (size_t)o->nruns * sizeof(double)), p += (size_t)o->nruns * sizeof(double);
    memcpy(o->run_x, p, (size_t)o->nruns * (size_t)n * sizeof(double));
    p += (size_t)o->nruns * (size_t)n * sizeof(double);
    memcpy(o->ring_f, p, (size_t)K * sizeof(double)), p += (size_t)K * sizeof(double);
    for (int i = 0; i < K; i++) {
        int32_t g;
        memcpy(&g, p, sizeof g), p += sizeof g;
        o->ring_gen[i] = g;
    }
    memcpy(o->ring_x, p, (size_t)K * (size_t)n * sizeof(double));
    o->ring_len = head[3], o->ring_next = head[4];
    return MLC_OK;
}

void mlc_optimize_rerank_free(optimize_run *o) {
    mlc_free(o->run_x), mlc_free(o->run_f);
    mlc_free(o->ring_x), mlc_free(o->ring_f), mlc_free(o->ring_gen);
    o->run_x = o->run_f = o->ring_x = o->ring_f = NULL;
    o->ring_gen = NULL;
}

void mlc_rerank_choice_free(mlc_rerank_choice *c) {
    mlc_free(c->u);
    mlc_free(c->j);
    cJSON_Delete(c->block);
    memset(c, 0, sizeof *c);
}

/* ---- The candidate list ---------------------------------------------------------------------- */
typedef struct candidate {
    const double *u;
    char source[32];
} candidate;

typedef struct cand_list {
    candidate *c;
    int len, cap, n;
} cand_list;

/* Add u unless the list is full or holds the same point already (bit for bit). */
static void add_candidate(cand_list *l, const double *u, const char *source, int number) {
    if (l->len == l->cap) return;
    for (int i = 0; i < l->len; i++)
        if (memcmp(l->c[i].u, u, (size_t)l->n * sizeof(double)) == 0) return;
    candidate *c = &l->c[l->len++];
    c->u = u;
    if (number >= 0)
        snprintf(c->source, sizeof c->source, "%s %d", source, number);
    else
        snprintf(c->source, sizeof c->source, "%s", source);
}

/* Indices 0..m-1 ordered by score, lowest first (ties by index: a stable order). */
static void order_by_score(const double *f, int m, int *idx) {
    for (int i = 0; i < m; i++)
        idx[i] = i;
    for (int i = 1; i < m; i++) {
        int t = idx[i], j = i;
        for (; j > 0 && f[idx[j - 1]] > f[t]; j--)
            idx[j] = idx[j - 1];
        idx[j] = t;
    }
}

/* The candidates, in the order they are taken until K: the gait returned without the
 * validation, the best-ever point (before the polish), the final mean, each run's best and the
 * last generations' bests, the last two by the optimizer's score. */
static void gather(optimize_run *o, const double *ret, cand_list *l) {
    add_candidate(l, ret, "returned", -1);
    add_candidate(l, mlc_cmaes_best_x(o->es), "best", -1);
    add_candidate(l, mlc_cmaes_mean(o->es), "mean", -1);
    int idx[MLC_REFERENCE_RERANK_MAX > 41 ? MLC_REFERENCE_RERANK_MAX : 41];
    if (o->run_x) {
        order_by_score(o->run_f, o->nruns, idx);
        for (int i = 0; i < o->nruns; i++)
            if (isfinite(o->run_f[idx[i]]))
                add_candidate(l, o->run_x + (size_t)idx[i] * l->n, "run", idx[i] + 1);
        order_by_score(o->ring_f, o->ring_len, idx);
        for (int i = 0; i < o->ring_len; i++)
            add_candidate(l, o->ring_x + (size_t)idx[i] * l->n, "generation", o->ring_gen[idx[i]]);
    }
}

/* ---- The replays -------------------------------------------------------------------------- */
typedef struct verdict {
    double J_reduced, J_full, fraction, seconds;
    int failed;      /* the replay stopped with an error (errs[i]): no verdict */
    int credible;    /* the reduced rollout: credible and gains (mlc_credibility_found) */
    int guard_steps; /* full-space steps that stopped at the iteration guard, unconverged */
} verdict;

/* reference.rerank = -1 caps each step of the replays at this many iterations. The bundled
 * bodies' gaits converge in 5-11 (docs/performance.md); a body the reference converges on
 * slowly (the octopod with a ten times stiffer body took 281 a step, 81 steps at the guard of
 * 1000) would otherwise make the default validation cost a minute on a 1k-tet body. A replay
 * that meets the cap is not judged (verdict.guard_steps). */
#define MLC_RERANK_AUTO_ITERATIONS 30

/* Candidate u's reduced evaluation: its verdict's reduced half, its decoded actuation into
 * act (3·m·k values: amplitudes, periods, phases) and its credibility into c. */
static mlc_status evaluate_candidate(optimize_run *o, const double *u, verdict *v, double *act,
                                     mlc_credibility *c) {
    mlc_actuation a;
    mlc_rollout_result r;
    mlc_status s = mlc_optimize_evaluate_gait(o, u, &a, &r, c);
    if (s != MLC_OK) return s;
    v->J_reduced = r.J;
    v->credible = mlc_credibility_found(&r, c);
    const size_t mk = (size_t)a.m * (size_t)a.k;
    memcpy(act, a.A, mk * sizeof(double));
    memcpy(act + mk, a.T, mk * sizeof(double));
    memcpy(act + 2 * mk, a.theta, mk * sizeof(double));
    return MLC_OK;
}

/* One candidate's replay as it travels between processes: plain values. */
typedef struct replay {
    mlc_judgement j;
    mlc_err err;
    int status, guard_steps;
    double J_full, fraction, seconds;
} replay;

/* Replay b of a block (replay_block) into r. */
static void replay_one(optimize_run *o, const mlc_config *cfg, const double *acts,
                       const mlc_credibility *creds, int b, replay *r) {
    const mlc_gait_space *g = &o->g;
    const size_t mk = (size_t)g->m * (size_t)g->k;
    const double *ai = acts + 3 * mk * (size_t)b;
    const mlc_actuation a = {g->m, g->k, ai, ai + mk, ai + 2 * mk};
    memset(r, 0, sizeof *r);
    double t0 = mlc_now();
    r->status = mlc_judge_fullspace(&o->p, cfg, &a, &creds[b], &r->j, &r->err);
    r->seconds = mlc_now() - t0;
    const int ok = r->status == MLC_OK;
    r->J_full = ok ? r->j.c.full.J : (double)NAN;
    r->fraction = ok ? mlc_judgement_transfer(&r->j) : (double)NAN;
    r->guard_steps = ok ? r->j.c.convergence.guard_steps : 0;
}

/* Replays of candidates lo..hi-1 (actuations acts, 3·m·k values each, and reduced
 * credibilities creds, both indexed from 0 = candidate lo) into out[0..hi-lo), several at once:
 * up to this process's threads, each replay on its share of them unless reference.threads says
 * otherwise (the reference gives the same bits for any thread count, so the verdicts do not
 * depend on how they were shared). */
static void replay_block(optimize_run *o, int lo, int hi, const double *acts,
                         const mlc_credibility *creds, replay *out) {
    const int nb = hi - lo, par = MLC_MAX(1, MLC_MIN(o->nthreads, nb));
    mlc_config cfg = o->cfg;
    if (cfg.reference.threads == 0) cfg.reference.threads = MLC_MAX(1, o->nthreads / par);
    /* The replays side by side share the memory bound: each grows its contact columns into its
     * share (judge.h, MLC_JUDGE_COLUMNS_MEMORY_SHARE of it). */
    if (par > 1) {
        const double bound = mlc_pipeline_memory_bound(&cfg);
        if (bound > 0) cfg.parallel.max_memory = bound / par;
    }
    if (cfg.reference.rerank < 0)
        cfg.reference.max_iterations =
            MLC_MIN(cfg.reference.max_iterations, MLC_RERANK_AUTO_ITERATIONS);
    /* One replay runs outside any parallel region: inside one, even an inactive one, its own
     * regions would be nested, and libgomp starts a nested team's threads anew each time
     * (the cat's replay took 9.2 s so, 5.9 s outside). */
    if (par > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(par)
        for (int b = 0; b < nb; b++)
            replay_one(o, &cfg, acts, creds, b, &out[b]);
    } else {
        for (int b = 0; b < nb; b++)
            replay_one(o, &cfg, acts, creds, b, &out[b]);
    }
}

/* Rank 0 to the others: how many candidates to replay (0: none, go home). */
static void tell(optimize_run *o, int count) {
    if (o->nproc <= 1 || o->rerank <= 0 || o->rerank_told) return;
    o->rerank_told = 1;
    mlc_dist_bcast_int(&count, 1, 0);
}

void mlc_optimize_rerank_release(optimize_run *o) {
    if (o->rank == 0) tell(o, 0);
}

mlc_status mlc_optimize_rerank_serve(optimize_run *o) {
    int count = 0;
    mlc_dist_bcast_int(&count, 1, 0);
    if (count <= 0) return MLC_OK;
    const size_t mk = (size_t)o->g.m * (size_t)o->g.k;
    double *acts = mlc_malloc(3 * mk * (size_t)count * sizeof(double));
    mlc_credibility *creds = mlc_malloc((size_t)count * sizeof *creds);
    int lo, hi;
    mlc_dist_block(count, o->rank, o->nproc, &lo, &hi);
    replay *mine = mlc_malloc((size_t)MLC_MAX(hi - lo, 1) * sizeof *mine);
    if (!acts || !creds || !mine) { /* rank 0 waits in the collectives below: end the job */
        fprintf(stderr, "modalloco: error: rank %d: out of memory for the full-space replays\n",
                o->rank);
        mlc_dist_abort(1);
    }
    mlc_dist_bcast_double(acts, 3 * mk * (size_t)count, 0);
    mlc_dist_bcast_bytes(creds, (size_t)count * sizeof *creds, 0);
    replay_block(o, lo, hi, acts + 3 * mk * (size_t)lo, creds + lo, mine);
    mlc_dist_gather_blocks_bytes(mine, NULL, count, sizeof *mine);
    mlc_free(acts), mlc_free(creds), mlc_free(mine);
    return MLC_OK;
}

/* The candidates' full-space replays (or the tests' substitute): shared among the processes
 * in blocks (mlc_dist_block) and gathered here by candidate. A replay that fails (the
 * reference's contact columns run out on a body lying flat, memory) is no verdict: v[i].failed
 * and its error in errs[i]; the job goes on. */
static mlc_status replay_candidates(optimize_run *o, const cand_list *l, double *acts,
                                    mlc_credibility *creds, verdict *v, mlc_judgement *js,
                                    mlc_err *errs) {
    if (o->def.rerank_judge) {
        for (int i = 0; i < l->len; i++) {
            double t0 = mlc_now();
            v[i].J_full = o->def.rerank_judge(o->def.rerank_judge_user, l->c[i].u, o->g.n);
            v[i].fraction = NAN;
            v[i].guard_steps = 0;
            v[i].failed = 0;
            v[i].seconds = mlc_now() - t0;
        }
        return MLC_OK;
    }
    replay *all = mlc_malloc((size_t)l->len * sizeof *all);
    if (!all) return mlc_optimize_oom(o);
    const size_t mk = (size_t)o->g.m * (size_t)o->g.k;
    tell(o, l->len);
    if (o->nproc > 1 && o->rerank_told) {
        mlc_dist_bcast_double(acts, 3 * mk * (size_t)l->len, 0);
        mlc_dist_bcast_bytes(creds, (size_t)l->len * sizeof *creds, 0);
    }
    int lo = 0, hi = l->len;
    if (o->nproc > 1) mlc_dist_block(l->len, 0, o->nproc, &lo, &hi);
    replay_block(o, lo, hi, acts, creds, all);
    if (o->nproc > 1) mlc_dist_gather_blocks_bytes(all, all, l->len, sizeof *all);
    for (int i = 0; i < l->len; i++) {
        js[i] = all[i].j;
        v[i].J_full = all[i].J_full;
        v[i].fraction = all[i].fraction;
        v[i].guard_steps = all[i].guard_steps;
        v[i].seconds = all[i].seconds;
        v[i].failed = all[i].status != MLC_OK;
        errs[i] = all[i].err;
    }
    mlc_free(all);
    return MLC_OK;
}

static cJSON *rerank_block(const cand_list *l, const verdict *v, const mlc_err *errs, int chosen) {
    cJSON *b = cJSON_CreateObject(), *arr = b ? cJSON_AddArrayToObject(b, "candidates") : NULL;
    if (!arr) {
        cJSON_Delete(b);
        return NULL;
    }
    for (int i = 0; i < l->len; i++) {
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        cJSON_AddStringToObject(e, "source", l->c[i].source);
        cJSON_AddItemToObject(e, "J_reduced", mlc_json_exact_number(v[i].J_reduced));
        cJSON_AddItemToObject(e, "J_full", mlc_json_exact_number(v[i].J_full));
        cJSON_AddItemToObject(e, "transfer_fraction", mlc_json_exact_number(v[i].fraction));
        cJSON_AddBoolToObject(e, "credible", v[i].credible);
        cJSON_AddBoolToObject(e, "converged", v[i].guard_steps == 0 && !v[i].failed);
        if (v[i].failed) cJSON_AddStringToObject(e, "error", errs[i].msg);
        cJSON_AddItemToArray(arr, e);
    }
    cJSON_AddNumberToObject(b, "chosen", chosen);
    return b;
}

mlc_status mlc_optimize_rerank(optimize_run *o, const double *ret, mlc_rerank_choice *out) {
    memset(out, 0, sizeof *out);
    const int n = o->g.n, K = o->rerank;
    candidate cands[MLC_REFERENCE_RERANK_MAX];
    verdict v[MLC_REFERENCE_RERANK_MAX] = {0};
    cand_list l = {cands, 0, MLC_MIN(K, MLC_REFERENCE_RERANK_MAX), n};
    gather(o, ret, &l);
    const size_t mk = (size_t)o->g.m * (size_t)o->g.k;
    mlc_judgement *js = mlc_calloc((size_t)l.len, sizeof *js);
    mlc_credibility *creds = mlc_calloc((size_t)l.len, sizeof *creds);
    double *acts = mlc_malloc(3 * mk * (size_t)l.len * sizeof(double));
    mlc_err *errs = mlc_calloc((size_t)l.len, sizeof *errs);
    if (!js || !creds || !acts || !errs) {
        mlc_free(js), mlc_free(creds), mlc_free(acts), mlc_free(errs);
        return mlc_optimize_oom(o);
    }
    mlc_status s = MLC_OK;
    for (int i = 0; i < l.len && s == MLC_OK; i++)
        s = evaluate_candidate(o, l.c[i].u, &v[i], acts + 3 * mk * (size_t)i, &creds[i]);
    if (s == MLC_OK) s = replay_candidates(o, &l, acts, creds, v, js, errs);
    mlc_free(creds), mlc_free(acts);
    int chosen = -1;
    for (int i = 0; i < l.len && s == MLC_OK; i++) {
        /* Strictly lower: on a tie the earlier candidate (the returned gait first) stays. A
         * replay that did not converge is no verdict. */
        if (v[i].credible && v[i].guard_steps == 0 && !v[i].failed && !isnan(v[i].J_full) &&
            (chosen < 0 || v[i].J_full < v[chosen].J_full))
            chosen = i;
        char why[96] = "";
        if (v[i].guard_steps > 0)
            snprintf(why, sizeof why, " (not converged: %d steps at %d iterations)",
                     v[i].guard_steps, js[i].c.convergence.most_iterations);
        else if (!v[i].credible)
            snprintf(why, sizeof why, " (not credible reduced)");
        if (!o->quiet && v[i].failed)
            mlc_sink_say(&o->def.sink, 0,
                         "modalloco: rerank %d/%d %-14s J %.6g reduced, the replay failed: %s\n",
                         i + 1, l.len, l.c[i].source, v[i].J_reduced, errs[i].msg);
        else if (!o->quiet)
            mlc_sink_say(&o->def.sink, 0,
                         "modalloco: rerank %d/%d %-14s J %.6g reduced, %.6g full-space, keeps "
                         "%.0f%% of its travel%s, %.1f s\n",
                         i + 1, l.len, l.c[i].source, v[i].J_reduced, v[i].J_full,
                         100 * v[i].fraction, why, v[i].seconds);
    }
    if (s != MLC_OK) {
        mlc_free(js), mlc_free(errs);
        return s;
    }
    const int none = chosen < 0;
    if (none) chosen = 0; /* nothing credible: the gait the job would return anyway */
    if (!o->quiet)
        mlc_sink_say(&o->def.sink, 0, "modalloco: rerank: returning candidate %d (%s)%s\n",
                     chosen + 1, l.c[chosen].source,
                     none ? ", as no candidate is credible reduced with a converged replay" : "");
    if (v[chosen].failed) snprintf(out->error, sizeof out->error, "%.255s", errs[chosen].msg);
    out->index = chosen;
    snprintf(out->source, sizeof out->source, "%s", l.c[chosen].source);
    out->seconds = v[chosen].seconds;
    out->judged = !o->def.rerank_judge && !v[chosen].failed;
    out->u = mlc_malloc((size_t)n * sizeof(double));
    out->j = mlc_malloc(sizeof *out->j);
    out->block = rerank_block(&l, v, errs, chosen);
    if (out->u) memcpy(out->u, l.c[chosen].u, (size_t)n * sizeof(double));
    if (out->j) *out->j = js[chosen];
    mlc_free(js), mlc_free(errs);
    if (!out->u || !out->j || !out->block) {
        mlc_rerank_choice_free(out);
        return mlc_optimize_oom(o);
    }
    return MLC_OK;
}
