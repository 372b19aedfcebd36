/* sweep_exec.c: a sweep's runs run here (sweep.h): one after the other in this process through
 * the caller's run_here, or --jobs N at a time as `modalloco optimize` processes (posix_spawn),
 * each writing to ROOT/run_NNNN/optimize.log with --threads = cores / N unless the run sets
 * parallel.threads or --threads is given; a run's result does not depend on its thread count,
 * so the files are the same as with one job. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dist.h"
#include "output.h"
#include "stop_signal.h"
#include "sweep.h"

/* Count run i's exit code; a failure is reported with where to look. */
static void tally_exit(mlc_sweep_tally *t, const mlc_sweep *w, const mlc_sweep_exec *x, int i,
                       int code, const char *log) {
    t->ran++;
    if (code == 0) return;
    if (code == 3) {
        t->none++; /* complete, with "found": false: a result, not a failure */
    } else if (code == 130) {
        t->interrupted = 1;
    } else {
        t->failed++;
        if (mlc_dist_rank() == 0)
            mlc_sink_say(&x->sink, 0,
                         "modalloco: sweep: run %d (%s) failed (exit %d)%s%s; going on\n", i,
                         w->runs[i].dir, code, log ? "; its log: " : "", log ? log : "");
    }
}

/* Run r as its shell command, as text (owned; NULL when out of memory). */
static char *run_text(const mlc_sweep *w, const mlc_sweep_run *r) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    mlc_sweep_print_run(f, w, r);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* One run after the other, in this process (all ranks together under mpirun). */
static void run_in_process(const mlc_sweep *w, const int *state, const mlc_sweep_exec *x,
                           mlc_sweep_tally *t) {
    const int quiet = x->quiet || mlc_dist_rank() != 0;
    for (int i = 0; i < w->nruns && !t->interrupted; i++) {
        const mlc_sweep_run *r = &w->runs[i];
        if (state[i] == MLC_SWEEP_SKIP) {
            t->skipped++;
            if (!quiet)
                mlc_sink_say(&x->sink, 0, "modalloco: sweep: run %d/%d complete, skipped\n", i + 1,
                             w->nruns);
            continue;
        }
        if (!quiet) {
            char *cmd = run_text(w, r);
            mlc_sink_say(&x->sink, 0, "modalloco: sweep: run %d/%d%s: %s\n", i + 1, w->nruns,
                         state[i] == MLC_SWEEP_RESUME ? " (resuming)" : "", cmd ? cmd : "");
            free(cmd); /* open_memstream's buffer is the C library's */
        }
        int code = x->run_here(x->user, w, i, state[i] == MLC_SWEEP_RESUME,
                               x->force && state[i] == MLC_SWEEP_CONFLICT);
        tally_exit(t, w, x, i, code, NULL);
    }
}

extern char **environ;

/* Start run i as `modalloco optimize ...` in its own process, stdin from /dev/null, stdout
 * and stderr appended to `log`. */
static mlc_status spawn_run(const mlc_sweep_exec *opt, const mlc_sweep *w, int i, int state,
                            int threads, const char *log, pid_t *pid, mlc_err *err) {
    const mlc_sweep_run *r = &w->runs[i];
    char exe[PATH_MAX], nthreads[16];
    mlc_sweep_program(exe, sizeof exe);
    snprintf(nthreads, sizeof nthreads, "%d", threads);
    /* Every argument owned: posix_spawn takes char *const[]. */
    const char *args[16 + 2 * MLC_SWEEP_MAX_SETS];
    int n = 0;
    args[n++] = exe;
    args[n++] = "optimize";
    if (w->base) args[n++] = w->base;
    args[n++] = "--out";
    args[n++] = r->dir;
    for (int k = 0; k < MLC_MIN(r->nsets, MLC_SWEEP_MAX_SETS); k++)
        args[n++] = "--set", args[n++] = r->sets[k];
    if (threads > 0) args[n++] = "--threads", args[n++] = nthreads;
    if (state == MLC_SWEEP_RESUME) args[n++] = "--resume", args[n++] = r->dir;
    if (opt->force && state == MLC_SWEEP_CONFLICT) args[n++] = "--force";
    if (opt->quiet) args[n++] = "--quiet";
    char *argv[sizeof args / sizeof args[0] + 1];
    int made = 0;
    for (; made < n; made++)
        if (!(argv[made] = mlc_strdup(args[made]))) break;
    argv[made] = NULL;
    mlc_status s = MLC_OK;
    /* The log starts with what ran, as the sweep's own progress line would say it. */
    FILE *lf = made == n ? fopen(log, "a") : NULL;
    if (made < n) {
        s = mlc_errf(err, MLC_ENOMEM, "out of memory");
    } else if (!lf) {
        s = mlc_errf(err, MLC_EIO, "%s: cannot write the run's log: %s", log, strerror(errno));
    } else {
        time_t now = time(NULL);
        char when[64];
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
        fprintf(lf, "modalloco sweep: run %d/%d%s, %s: ", i + 1, w->nruns,
                state == MLC_SWEEP_RESUME ? " (resuming)" : "", when);
        mlc_sweep_print_run(lf, w, r);
        fputc('\n', lf);
        fclose(lf);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_APPEND,
                                         0644);
        posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
        /* The run reacts to SIGINT/SIGTERM even when the sweep was started with them ignored
         * (a background job of a script): it saves a checkpoint, or stops before its first
         * generation. */
        posix_spawnattr_t at;
        posix_spawnattr_init(&at);
        sigset_t def;
        sigemptyset(&def);
        sigaddset(&def, SIGINT);
        sigaddset(&def, SIGTERM);
        posix_spawnattr_setsigdefault(&at, &def);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF);
        int e = posix_spawn(pid, exe, &fa, &at, argv, environ);
        posix_spawnattr_destroy(&at);
        posix_spawn_file_actions_destroy(&fa);
        if (e) s = mlc_errf(err, MLC_EIO, "cannot start %s: %s", exe, strerror(e));
    }
    for (int k = 0; k < made; k++)
        mlc_free(argv[k]);
    return s;
}

/* Runs `jobs` at a time, each its own process (spawn_run). A run that fails is counted and
 * the others go on. SIGINT/SIGTERM stops starting runs and passes the signal on to the running
 * ones, which save their checkpoint and exit 130; the sweep waits for every one of them. */
static mlc_status run_parallel(const mlc_sweep_exec *opt, const mlc_sweep *w, const int *state,
                               int jobs, mlc_sweep_tally *t, mlc_err *err) {
    const mlc_sweep_exec *x = opt;
    int threads = 0; /* 0: leave each run its own parallel.threads */
    if (opt->threads_set) {
        threads = opt->threads;
    } else {
#ifdef _OPENMP
        int cores = omp_get_num_procs();
#else
        int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
#endif
        threads = MLC_MAX(1, cores / jobs);
    }
    pid_t *pid = mlc_calloc((size_t)jobs, sizeof *pid);
    int *run = mlc_calloc((size_t)jobs, sizeof *run);
    double *start = mlc_calloc((size_t)jobs, sizeof *start);
    char **logs = mlc_calloc((size_t)w->nruns, sizeof *logs);
    if (!pid || !run || !start || !logs) {
        mlc_free(pid), mlc_free(run), mlc_free(start), mlc_free(logs);
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    }
    /* SIGINT/SIGTERM: start no more runs, pass the signal on to the running ones. */
    mlc_stop_signals signals;
    mlc_stop_signals_catch(&signals);
    mlc_status s = MLC_OK;
    int next = 0, running = 0, forwarded = 0;
    const int quiet = opt->quiet;
    for (;;) {
        /* Fill the free slots, unless the sweep is stopping. */
        while (!mlc_stop_signal() && !t->interrupted && s == MLC_OK && running < jobs &&
               next < w->nruns) {
            int i = next++;
            if (state[i] == MLC_SWEEP_SKIP) {
                t->skipped++;
                if (!quiet)
                    mlc_sink_say(&x->sink, 0, "modalloco: sweep: run %d/%d complete, skipped\n",
                                 i + 1, w->nruns);
                continue;
            }
            int slot = 0;
            while (pid[slot])
                slot++;
            /* A run with its own parallel.threads keeps it unless --threads says otherwise. */
            int nt = opt->threads_set || w->runs[i].threads == 0 ? threads : 0;
            if (!(logs[i] = mlc_path_join_alloc(w->runs[i].dir, "optimize.log"))) {
                s = mlc_errf(err, MLC_ENOMEM, "out of memory");
                break;
            }
            if ((s = spawn_run(opt, w, i, state[i], nt, logs[i], &pid[slot], err)) != MLC_OK) break;
            run[slot] = i, start[slot] = mlc_now();
            running++;
            if (!quiet)
                mlc_sink_say(&x->sink, 0,
                             "modalloco: sweep: run %d/%d started%s (%d running), log %s\n", i + 1,
                             w->nruns, state[i] == MLC_SWEEP_RESUME ? ", resuming" : "", running,
                             logs[i]);
        }
        if (running == 0) break;
        const int caught = mlc_stop_signal();
        if (caught && forwarded != caught) {
            /* Ctrl-C reaches the runs from the terminal too; a signal sent to the sweep alone
             * must reach them as well. */
            for (int k = 0; k < jobs; k++)
                if (pid[k]) kill(pid[k], SIGINT);
            forwarded = caught;
            if (!quiet)
                mlc_sink_say(&x->sink, 0,
                             "modalloco: sweep: stopping; waiting for %d running run%s to "
                             "save a checkpoint\n",
                             running, running == 1 ? "" : "s");
        }
        int status;
        pid_t done = waitpid(-1, &status, WNOHANG);
        if (done == 0) {
            /* Poll: a signal that arrives while blocked in waitpid is still forwarded soon. */
            struct timespec nap = {0, 50 * 1000 * 1000};
            nanosleep(&nap, NULL);
            continue;
        }
        if (done < 0) {
            if (errno == EINTR) continue;
            break; /* no children left (ECHILD) */
        }
        int slot = 0;
        while (slot < jobs && pid[slot] != done)
            slot++;
        if (slot == jobs) continue; /* not one of ours */
        pid[slot] = 0;
        running--;
        int i = run[slot];
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        /* Killed by the signal that stopped the sweep (before its generation loop, where a run
         * saves a checkpoint): stopped, not failed. */
        if (mlc_stop_signal() && WIFSIGNALED(status)) code = 130;
        tally_exit(t, w, x, i, code, logs[i]);
        if (!quiet && code != 130)
            mlc_sink_say(&x->sink, 0, "modalloco: sweep: run %d/%d %s after %.1f s (exit %d)\n",
                         i + 1, w->nruns, code == 0 || code == 3 ? "done" : "failed",
                         mlc_now() - start[slot], code);
    }
    if (mlc_stop_signal()) t->interrupted = 1;
    mlc_stop_signals_release(&signals);
    for (int i = 0; i < w->nruns; i++)
        mlc_free(logs[i]);
    mlc_free(logs), mlc_free(pid), mlc_free(run), mlc_free(start);
    return s;
}

mlc_status mlc_sweep_execute(const mlc_sweep *w, const int *state, const mlc_sweep_exec *x,
                             mlc_sweep_tally *t, mlc_err *err) {
    const int jobs = MLC_MIN(MLC_MAX(x->jobs, 1), w->nruns);
    if (jobs > 1) return run_parallel(x, w, state, jobs, t, err);
    run_in_process(w, state, x, t);
    return MLC_OK;
}
