/* cli.c: `modalloco COMMAND [options]`: option parsing, help texts, the effective
 * configuration, and dispatch. Only this layer prints errors or chooses exit codes. */
#include "modalloco/cli.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "commands.h"
#include "dist.h"

static const char *program_help =
    "usage: modalloco COMMAND [options]\n"
    "\n"
    "Finds a gait for a soft-body character given as a tetrahedral (or surface) mesh.\n"
    "\n"
    "commands:\n"
    "  info MESH [--json]            validate a mesh and print its statistics\n"
    "  modes [CONFIG|MESH]           compute subspaces and mode visualizations\n"
    "  simulate [CONFIG|PARAMS]      run one rollout and write its trajectory and caches\n"
    "  optimize [CONFIG|MESH]        search a gait with CMA-ES (the main job)\n"
    "  sweep SWEEP.json              many optimize runs: here, or as a Slurm job array\n"
    "  summarize DIR...              one CSV row (and bar of a chart) per run\n"
    "  view DIR [--png FILE]         HTML viewer (DIR/view.html) or PNG film strip of a run\n"
    "\n"
    "options for every command: --help, --set KEY=VALUE (repeatable), --out DIR\n"
    "  modalloco --version           print the version and build features\n"
    "  modalloco COMMAND --help      options of one command\n"
    "\n"
    "Exit codes: 0 success, 1 runtime failure, 2 usage or input error, 3 optimize ran to\n"
    "the end but found no credible gait, 130 interrupted by a signal after saving what can\n"
    "be resumed.\n"
    "Configuration keys: docs/config.md; input errors: docs/errors.md.\n";

static const char *info_help =
    "usage: modalloco info MESH [--json]\n"
    "\n"
    "Reads, validates and repairs a tetrahedral mesh (.mesh, .node/.ele, .msh) or a surface\n"
    "(.off, .obj, .stl, .ply; tetrahedralized with tetgen) and prints vertices, tets,\n"
    "boundary faces, volume, bounding box, tet volumes, smallest dihedral angle, flipped tets,\n"
    "connected components, the up axis and the preparation transform (docs/method.md §1).\n"
    "Warns when the body would tip over with the configured up axis but stands on another.\n"
    "\n"
    "  --json             print one JSON object instead of text\n"
    "  --set KEY=VALUE    e.g. mesh.up=+z, mesh.normalize=false, mesh.extent=1 (affect the\n"
    "                     transform)\n";

/* The option of every command that precomputes (budget.h, docs/scaling.md). */
#define MAX_MEMORY_HELP                                                                            \
    "  --max-memory SIZE  memory bound of the precompute, e.g. 8G or 512M (default: 80% of\n"      \
    "                     the physical memory, or of a lower cgroup or ulimit -v limit); a\n"      \
    "                     mesh whose precompute would need more is refused before it starts\n"

static const char *modes_help =
    "usage: modalloco modes [CONFIG|MESH] [--out DIR] [--set KEY=VALUE]... [--max-memory SIZE]\n"
    "\n"
    "Computes the skinning eigenmodes, vibration modes, amplitude limits, clusters and contact\n"
    "samples, and writes DIR/modes.json, DIR/config.json, one surface cache per vibration mode\n"
    "(mode_I.pc2 with surface.obj), weight_B.ply and clusters.ply (vertex colours) and\n"
    "subspace.vtk (ParaView). subspace.cache=FILE saves/reuses the precomputation.\n"
    "\n" MAX_MEMORY_HELP;

static const char *simulate_help =
    "usage: modalloco simulate [CONFIG|PARAMS] [--out DIR] [--set KEY=VALUE]... [--full-space]\n"
    "                          [--expect RESULT.json [--tolerance T]]\n"
    "\n"
    "Runs one rollout with the actuation parameters of a params.json written by optimize, or\n"
    "of actuation.parameters in a config, and writes trajectory.csv, surface.obj,\n"
    "animation.pc2, result.json and config.json; prints the objective terms and the\n"
    "gait's credibility (rise, airborne, penetration, up_min, robustness: README), and warns\n"
    "when it is not credible.\n"
    "\n"
    "  --expect FILE      compare with a stored result.json (J, its terms, the final\n"
    "                     centre of mass); exit 1 with a report when they differ\n"
    "  --tolerance T      relative tolerance for --expect (default 1e-9)\n"
    "  --full-space       also run the full-space reference simulator and report the\n"
    "                     subspace error (slow on large meshes)\n" MAX_MEMORY_HELP
    "  --force            overwrite an output directory that holds another run\n";

static const char *optimize_help =
    "usage: modalloco optimize [CONFIG|MESH] [--out DIR] [--set KEY=VALUE]... [--seed N]\n"
    "                          [--threads N] [--resume DIR] [--quiet] [--dry-run]\n"
    "\n"
    "Searches actuation parameters with CMA-ES and writes params.json, history.csv,\n"
    "history.svg, checkpoint.bin, config.json and the best gait's rollout (trajectory.csv,\n"
    "surface.obj, animation.pc2, result.json) and prints its objective terms and\n"
    "credibility. Exit code 3 when the run ended but no credible gait with J < 0 was found\n"
    "(every output is still written, with \"found\": false).\n"
    "\n"
    "  --seed N           cmaes.seed (same seed, same result, for any thread count)\n"
    "  --threads N        parallel.threads (0 = all cores)\n"
    "  --resume DIR       continue the interrupted run in DIR (same configuration)\n"
    "  --quiet            no progress output\n" MAX_MEMORY_HELP
    "  --dry-run          validate, precompute, time one generation of rollouts, print the\n"
    "                     problem size and the estimated wall time; write nothing\n"
    "  --force            overwrite an output directory that holds another run\n"
    "Under mpirun, each generation's rollouts are spread over the processes (docs/cluster.md).\n"
    "SIGINT/SIGTERM save a checkpoint and exit with code 130; --resume continues.\n";

static const char *view_help =
    "usage: modalloco view DIR [--png FILE [--frames N]]\n"
    "\n"
    "Writes DIR/view.html for a directory written by optimize or simulate: one self-contained\n"
    "page (no network) that plays the gait with WebGL (drag to orbit, wheel to zoom), with the\n"
    "ground, the centre-of-mass path, the convergence plot and the key numbers. Big surfaces\n"
    "are quantized and/or subsampled to keep the page under 60 MB (the page says so).\n"
    "\n"
    "  --png FILE         instead, render a film strip of the gait into FILE (no browser)\n"
    "  --frames N         panels of the film strip, evenly spread over the gait (default 6)\n";

static const char *sweep_help =
    "usage: modalloco sweep SWEEP.json [--out ROOT] [--slurm FILE] [--dry-run] [--force]\n"
    "                                  [--threads N] [--quiet]\n"
    "\n"
    "Expands SWEEP.json ({\"base\": CONFIG|MESH|{...}, \"grid\": {\"KEY\": [values]},\n"
    "\"list\": [{\"KEY\": value}], \"seeds\": [1, 2], \"args\": [\"KEY=VALUE\"]}) into runs\n"
    "ROOT/run_0000, ... (every grid point x list entry x seed) and runs them one after the\n"
    "other (under mpirun each run uses every process). Complete runs are skipped and\n"
    "interrupted ones resumed, so the same command continues a sweep. Writes ROOT/runs.csv,\n"
    "ROOT/manifest.tsv and ROOT/run_NNNN/run.json. Guide: docs/cluster.md.\n"
    "\n"
    "  --out ROOT         output root (default: \"out\" in the file, else sweep-out)\n"
    "  --slurm FILE       write a Slurm job-array script (one task per run) instead of running\n"
    "  --dry-run          list the runs and their state; write nothing\n"
    "  --force            redo runs whose directory holds another configuration\n";

static const char *summarize_help =
    "usage: modalloco summarize DIR... [--out FILE.csv]\n"
    "\n"
    "One CSV row per run (the swept settings, seed, J, displacement, J_align, generations,\n"
    "wall seconds, status) for optimize output directories or sweep roots (their run_*\n"
    "subdirectories). Prints to stdout, or writes FILE.csv and a bar chart FILE.svg.\n";

int mlc_cli_fail(mlc_status s, const mlc_err *err) {
    const char *msg = err && err->msg[0] ? err->msg : mlc_strerror(s);
    /* A message may list several problems, one per line (a surface with several defects):
     * each line gets the prefix, so every line reads and greps alone. */
    for (;;) {
        const char *nl = strchr(msg, '\n');
        int len = nl ? (int)(nl - msg) : (int)strlen(msg);
        fprintf(stderr, "modalloco: error: %.*s\n", len, msg);
        if (!nl) break;
        msg = nl + 1;
    }
    return mlc_exit_code(s);
}

static int usage_error(const char *command, const char *fmt, const char *arg) {
    fprintf(stderr, "modalloco: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'modalloco %s%s--help'.\n", command ? command : "", command ? " " : "");
    return 2;
}

static int parse_long(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

mlc_status mlc_cli_load_config(const mlc_cli_options *opt, mlc_config *cfg, mlc_err *err) {
    mlc_status s;
    mlc_config_defaults(cfg);
    if (opt->input) {
        size_t n = strlen(opt->input);
        if (n >= 5 && strcmp(opt->input + n - 5, ".json") == 0) {
            if ((s = mlc_config_load_file(cfg, opt->input, err)) != MLC_OK) return s;
        } else {
            if (n >= sizeof cfg->mesh.path)
                return mlc_errf(err, MLC_EINVAL, "mesh path too long: %s", opt->input);
            snprintf(cfg->mesh.path, sizeof cfg->mesh.path, "%s", opt->input);
        }
    }
    for (int i = 0; i < opt->nsets; i++)
        if ((s = mlc_config_set(cfg, opt->sets[i], err)) != MLC_OK) return s;
    if (opt->seed_set) cfg->cmaes.seed = (int)opt->seed;
    if (opt->threads_set) cfg->parallel.threads = opt->threads;
    if (opt->max_memory > 0) cfg->parallel.max_memory = opt->max_memory;
    if (opt->out) {
        if (strlen(opt->out) >= sizeof cfg->output.dir)
            return mlc_errf(err, MLC_EINVAL, "--out: path too long");
        snprintf(cfg->output.dir, sizeof cfg->output.dir, "%s", opt->out);
    }
    s = mlc_config_resolve_local_modes(cfg, NULL, opt->input, opt->input, opt->sets, opt->nsets,
                                       err);
    if (s != MLC_OK) return s;
    return mlc_config_validate(cfg, err);
}

/* OpenBLAS is the system BLAS on Debian (through the libblas.so.3 alternative) and threads
 * its kernels by default. A threaded BLAS sums in an order that depends on the thread count,
 * which would make the precompute (and so every result) differ in the last bits between
 * machines; and on the sizes we hand it one thread is as fast (measured). Pin it to one
 * thread when the library offers the call; our own parallelism is across rollouts. */
static void pin_blas_threads(void) {
    /* Looked up at run time: Debian's libblas.so.3 forwards to libopenblas.so.0, so the symbol
     * is in the process but not in the library we link against. */
    void *self = dlopen(NULL, RTLD_LAZY);
    if (!self) return;
    void *sym = dlsym(self, "openblas_set_num_threads");
    if (sym) {
        void (*set_threads)(int);
        memcpy(&set_threads, &sym, sizeof set_threads); /* object → function pointer, portably */
        set_threads(1);
    }
    dlclose(self);
}

/* `modalloco --version`: the version and the features this build has. */
static int print_version(void) {
    printf("modalloco %s\n", MLC_VERSION);
#ifdef _OPENMP
    printf("features: openmp");
#else
    printf("features: (no openmp)");
#endif
#ifdef MLC_HAVE_MPI
    printf(" mpi\n");
#else
    printf(" (no mpi)\n");
#endif
    return 0;
}

/* A command's help text and entry point; 0 when `name` is no command. */
static int find_command(const char *name, const char **help, int (**run)(const mlc_cli_options *)) {
    const struct {
        const char *name, *help;
        int (*run)(const mlc_cli_options *);
    } commands[] = {{"info", info_help, mlc_cmd_info},
                    {"modes", modes_help, mlc_cmd_modes},
                    {"simulate", simulate_help, mlc_cmd_simulate},
                    {"optimize", optimize_help, mlc_cmd_optimize},
                    {"sweep", sweep_help, mlc_cmd_sweep},
                    {"summarize", summarize_help, mlc_cmd_summarize},
                    {"view", view_help, mlc_cmd_view}};
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
        if (!strcmp(name, commands[k].name)) {
            *help = commands[k].help, *run = commands[k].run;
            return 1;
        }
    return 0;
}

/* Parse argv[*i] (and its value, which may be the next argument) into *opt. Returns -1 to go
 * on, else the exit code (0 after --help, 2 on a usage error). */
static int parse_arg(mlc_cli_options *opt, const char *help, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    const char *cmd = opt->command;
    /* Accept both "--opt value" and "--opt=value". */
    const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
    char name[64];
    const char *val = NULL;
    if (eq && (size_t)(eq - a) < sizeof name) {
        memcpy(name, a, (size_t)(eq - a));
        name[eq - a] = 0;
        val = eq + 1;
    } else {
        snprintf(name, sizeof name, "%s", a);
    }
#define NEED_VALUE()                                                                               \
    do {                                                                                           \
        if (!val) {                                                                                \
            if (*i + 1 >= argc) return usage_error(cmd, "option %s needs a value", name);          \
            val = argv[++*i];                                                                      \
        }                                                                                          \
    } while (0)
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        fputs(help, stdout);
        return 0;
    } else if (!strcmp(name, "--out") || !strcmp(name, "-o")) {
        NEED_VALUE();
        opt->out = val;
    } else if (!strcmp(name, "--set")) {
        NEED_VALUE();
        if (opt->nsets >= MLC_CLI_MAX_SETS)
            return usage_error(cmd, "too many --set options (%s)", "max 256");
        opt->sets[opt->nsets++] = val;
    } else if (!strcmp(name, "--seed") && !strcmp(cmd, "optimize")) {
        NEED_VALUE();
        if (!parse_long(val, -2147483647LL, 2147483647LL, &opt->seed))
            return usage_error(cmd, "--seed expects an integer, got '%s'", val);
        opt->seed_set = 1;
    } else if (!strcmp(name, "--threads") && (!strcmp(cmd, "optimize") || !strcmp(cmd, "sweep"))) {
        NEED_VALUE();
        long long t;
        if (!parse_long(val, 0, 4096, &t))
            return usage_error(cmd, "--threads expects an integer 0..4096, got '%s'", val);
        opt->threads = (int)t;
        opt->threads_set = 1;
    } else if (!strcmp(name, "--resume") && !strcmp(cmd, "optimize")) {
        NEED_VALUE();
        opt->resume = val;
    } else if (!strcmp(name, "--png") && !strcmp(cmd, "view")) {
        NEED_VALUE();
        opt->png = val;
    } else if (!strcmp(name, "--frames") && !strcmp(cmd, "view")) {
        NEED_VALUE();
        long long n;
        if (!parse_long(val, 1, 64, &n))
            return usage_error(cmd, "--frames expects an integer 1..64, got '%s'", val);
        opt->frames = (int)n;
    } else if (!strcmp(name, "--quiet") || !strcmp(name, "-q")) {
        opt->quiet = 1;
    } else if (!strcmp(name, "--json") && !strcmp(cmd, "info")) {
        opt->json = 1;
    } else if (!strcmp(name, "--expect") && !strcmp(cmd, "simulate")) {
        NEED_VALUE();
        opt->expect = val;
    } else if (!strcmp(name, "--tolerance") && !strcmp(cmd, "simulate")) {
        NEED_VALUE();
        char *end;
        errno = 0;
        opt->tolerance = strtod(val, &end);
        if (errno || end == val || *end || !(opt->tolerance >= 0) || !isfinite(opt->tolerance))
            return usage_error(cmd, "--tolerance expects a number >= 0, got '%s'", val);
        opt->tolerance_set = 1;
    } else if (!strcmp(name, "--max-memory") &&
               (!strcmp(cmd, "modes") || !strcmp(cmd, "simulate") || !strcmp(cmd, "optimize"))) {
        NEED_VALUE();
        mlc_err e = {0};
        if (mlc_budget_parse(val, &opt->max_memory, &e) != MLC_OK)
            return usage_error(cmd, "%s", e.msg);
    } else if (!strcmp(name, "--full-space") && !strcmp(cmd, "simulate")) {
        opt->full_space = 1;
    } else if (!strcmp(name, "--force")) {
        opt->force = 1;
    } else if (!strcmp(name, "--dry-run") && (!strcmp(cmd, "optimize") || !strcmp(cmd, "sweep"))) {
        opt->dry_run = 1;
    } else if (!strcmp(name, "--slurm") && !strcmp(cmd, "sweep")) {
        NEED_VALUE();
        opt->slurm = val;
    } else if (a[0] == '-' && a[1] != 0) {
        return usage_error(cmd, "unknown option '%s'", a);
    } else if (!strcmp(cmd, "summarize")) {
        if (opt->ninputs >= MLC_CLI_MAX_SETS)
            return usage_error(cmd, "too many directories (%s)", "max 256");
        opt->inputs[opt->ninputs++] = a;
    } else if (!opt->input) {
        opt->input = a;
    } else {
        return usage_error(cmd, "unexpected argument '%s'", a);
    }
#undef NEED_VALUE
    return -1;
}

/* The positional arguments a command cannot run without. Returns -1 when they are there, else
 * the exit code of the usage error. */
static int check_required(const mlc_cli_options *opt) {
    if (!strcmp(opt->command, "sweep") && !opt->input)
        return usage_error("sweep", "%s", "sweep needs a SWEEP.json argument");
    if (!strcmp(opt->command, "summarize") && !opt->ninputs)
        return usage_error("summarize", "%s", "summarize needs one or more DIR arguments");
    if (!strcmp(opt->command, "info") && !opt->input)
        return usage_error("info", "%s", "info needs a MESH argument");
    if (!strcmp(opt->command, "view") && !opt->input)
        return usage_error("view", "%s", "view needs a DIR argument (an optimize output)");
    return -1;
}

/* These commands run in one process: several copies that a launcher started would each do the
 * whole work into the same files (optimize and sweep check in mlc_dist_init). Returns -1 when
 * this is the only copy, else the exit code. */
static int refuse_parallel_launch(const mlc_cli_options *opt, int (*run)(const mlc_cli_options *)) {
    if (run != mlc_cmd_modes && run != mlc_cmd_simulate && run != mlc_cmd_summarize &&
        run != mlc_cmd_view)
        return -1;
    mlc_launch l = mlc_dist_launch(NULL);
    if (l.tasks <= 1) return -1;
    mlc_err err = {0};
    mlc_errf(&err, MLC_EINVAL,
             "%s runs as one process, but this is %s %d of %d started together (%s): "
             "each would write the same files; start one (srun --ntasks=1, or without "
             "mpirun)",
             opt->command, l.slurm ? "task" : "rank", l.index, l.tasks, l.var);
    return mlc_cli_fail(MLC_EINVAL, &err);
}

int mlc_cli_main(int argc, char **argv) {
    pin_blas_threads();
    if (argc < 2) {
        fputs(program_help, stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(program_help, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) return print_version();
    mlc_cli_options opt;
    memset(&opt, 0, sizeof opt);
    opt.command = argv[1];
    const char *help = NULL;
    int (*run)(const mlc_cli_options *) = NULL;
    if (!find_command(opt.command, &help, &run))
        return usage_error(NULL, "unknown command '%s'", opt.command);
    int rc;
    for (int i = 2; i < argc; i++)
        if ((rc = parse_arg(&opt, help, argc, argv, &i)) >= 0) return rc;
    if ((rc = check_required(&opt)) >= 0 || (rc = refuse_parallel_launch(&opt, run)) >= 0)
        return rc;
    rc = run(&opt);
    mlc_dist_finalize(); /* only if a command started MPI (under mpirun/srun) */
    return rc;
}
