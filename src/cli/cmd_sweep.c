/* cmd_sweep.c: `modalloco sweep SWEEP.json`: expand a parameter sweep into optimize runs
 * (job/sweep.h); run them here, one after the other in this process or --jobs N at a time as
 * child processes, or write a Slurm job array, or list them (--dry-run [--json]). docs/cluster.md
 * is the user's guide. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "commands.h"
#include "dist.h"
#include "sweep.h"

/* Run i in this process: `modalloco optimize` with the run's arguments (under mpirun every run
 * uses all processes). */
static int run_here(const void *user, const mlc_sweep *w, int i, int resume, int force) {
    const mlc_cli_options *opt = user;
    const mlc_sweep_run *r = &w->runs[i];
    mlc_cli_options o;
    memset(&o, 0, sizeof o);
    o.command = "optimize";
    o.input = w->base;
    o.out = r->dir;
    o.nsets = MLC_MIN(r->nsets, MLC_CLI_MAX_SETS);
    for (int j = 0; j < o.nsets; j++)
        o.sets[j] = r->sets[j];
    o.quiet = opt->quiet;
    o.force = force;
    if (resume) o.resume = r->dir;
    if (opt->threads_set) o.threads = opt->threads, o.threads_set = 1;
    fflush(stdout);
    int code = mlc_cmd_optimize(&o);
    fflush(stdout);
    return code;
}

/* Options that only make sense together, checked before anything is read. */
static mlc_status check_options(const mlc_cli_options *opt, mlc_err *err) {
    if (opt->json && !opt->dry_run)
        return mlc_errf(err, MLC_EINVAL,
                        "sweep --json goes with --dry-run (it lists the runs as JSON); "
                        "`modalloco summarize ROOT --json` reports their results");
    if (opt->slurm_max_running && !opt->slurm)
        return mlc_errf(err, MLC_EINVAL,
                        "--slurm-max-running goes with --slurm FILE (it throttles the job "
                        "array)");
    if (opt->jobs > 1 && opt->slurm)
        return mlc_errf(err, MLC_EINVAL,
                        "--jobs runs a sweep here; a Slurm array runs its tasks as Slurm "
                        "schedules them (limit them with --slurm-max-running N)");
    if (opt->jobs > 1 && mlc_dist_size() > 1)
        return mlc_errf(err, MLC_EINVAL,
                        "--jobs %d under mpirun: there every run uses all %d processes, one "
                        "run at a time; drop --jobs, or run the sweep without mpirun",
                        opt->jobs, mlc_dist_size());
    return MLC_OK;
}

int mlc_cmd_sweep(const mlc_cli_options *opt) {
    mlc_err err = {0};
    mlc_sweep w;
    memset(&w, 0, sizeof w);
    int rc = 0, *state = NULL;
    mlc_status s;
    if ((s = mlc_dist_init(&err)) != MLC_OK) goto fail;
    const int rank = mlc_dist_rank();
    const int quiet = opt->quiet || rank != 0;
    if (!opt->input) {
        s = mlc_errf(&err, MLC_EINVAL, "sweep needs a SWEEP.json argument (see docs/cluster.md)");
        goto fail;
    }
    if ((s = check_options(opt, &err)) != MLC_OK) goto fail;
    /* Every rank expands the sweep (cheap and deterministic); only rank 0 writes. */
    if ((s = mlc_sweep_load(&w, opt->input, opt->out, opt->sets, opt->nsets, &err)) != MLC_OK)
        goto fail;
    if ((s = mlc_sweep_states(&w, &state, &err)) != MLC_OK) goto fail;
    if (opt->dry_run) {
        if (rank == 0 && opt->json) {
            rc = mlc_cli_print_json(mlc_sweep_runs_json(&w, state));
        } else if (rank == 0) {
            mlc_sweep_print_list(stdout, &w, state);
        }
        goto done;
    }
    if (!opt->force && (s = mlc_sweep_check_conflicts(&w, state, &err)) != MLC_OK) goto fail;
    s = MLC_OK;
    if (rank == 0) s = mlc_sweep_write_manifest(&w, &err);
    if (rank == 0 && s == MLC_OK && opt->slurm)
        s = mlc_sweep_write_slurm(&w, opt->slurm, opt->slurm_max_running, &err);
    /* Only rank 0 wrote: the others must learn its outcome before running anything. */
    if ((s = mlc_dist_agree(s, NULL)) != MLC_OK) goto fail;

    if (opt->slurm) {
        if (rank == 0) mlc_sweep_print_slurm(stdout, &w, state, opt->slurm, opt->slurm_max_running);
        goto done;
    }

    mlc_sweep_tally t = {0};
    double t0 = mlc_now();
    mlc_sweep_exec x = {opt->jobs, opt->threads, opt->threads_set, opt->force, opt->quiet,
                        run_here,  opt,          mlc_cli_sink()};
    if (opt->jobs > 1) fflush(stdout);
    if ((s = mlc_sweep_execute(&w, state, &x, &t, &err)) != MLC_OK) goto fail;
    if (t.interrupted) {
        if (!quiet)
            fprintf(stderr, "modalloco: sweep interrupted; run the same command again to "
                            "continue\n");
        rc = 130;
        goto done;
    }
    if (rank == 0)
        fprintf(stderr,
                "modalloco: sweep: %d runs: %d ran (%d failed, %d found no credible gait), %d "
                "already complete; %.1f s; results: modalloco summarize %s\n",
                w.nruns, t.ran, t.failed, t.none, t.skipped, mlc_now() - t0, w.root);
    rc = t.failed ? 1 : 0;
    goto done;
fail:
    /* Every rank met the same failure (the sweep file is the same): say it once. */
    rc = mlc_dist_rank() == 0 ? mlc_cli_fail(s, &err) : mlc_exit_code(s);
done:
    mlc_free(state);
    mlc_sweep_free(&w);
    return rc;
}
