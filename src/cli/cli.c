/* cli.c: `modalloco COMMAND [options]`: option parsing, help texts, the effective
 * configuration, and dispatch. Only this layer prints errors or chooses exit codes. */
#include "modalloco/cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "blas_runtime.h"
#include "budget.h"
#include "commands.h"
#include "config_input.h"
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
    "  summarize DIR...              runs grouped by setting: tables, plots, a gallery\n"
    "  view DIR [--png|--gif|--apng|--mp4 FILE]\n"
    "                                HTML viewer (DIR/view.html), film strip or animation\n"
    "\n"
    "options for every command: --help, --set KEY=VALUE (repeatable), --out DIR\n"
    "  modalloco --version           print the version and build features\n"
    "  modalloco COMMAND --help      options of one command (also: modalloco help COMMAND)\n"
    "  modalloco completion bash     print a bash completion script (commands, options, keys)\n"
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
    "                     subspace error (slow on large meshes); writes fullspace.json,\n"
    "                     fullspace_trajectory.csv and fullspace.pc2\n" MAX_MEMORY_HELP
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
    "                     problem size, the estimated wall time (an upper bound) and a\n"
    "                     typical one; write nothing\n"
    "  --force            overwrite an output directory that holds another run\n"
    "Under mpirun, each generation's rollouts are spread over the processes (docs/cluster.md).\n"
    "SIGINT/SIGTERM save a checkpoint and exit with code 130; --resume continues.\n";

static const char *view_help =
    "usage: modalloco view DIR [--png FILE] [--gif FILE] [--apng FILE] [--mp4 FILE]\n"
    "                          [--frames N] [--fps N] [--speed X] [--width W] [--height H]\n"
    "                          [--hold S] [--follow]\n"
    "\n"
    "Writes DIR/view.html for a directory written by optimize or simulate: one self-contained\n"
    "page (no network) that plays the gait with WebGL (drag to orbit, wheel to zoom), with the\n"
    "ground, the centre-of-mass path, the convergence plot and the key numbers. Big surfaces\n"
    "are quantized and/or subsampled to keep the page under 60 MB (the page says so).\n"
    "With a file option it renders pictures instead (no browser), each frame with the ground,\n"
    "the task and the simulated time; several file options write several files:\n"
    "\n"
    "  --png FILE         a film strip: panels side by side, evenly spread over the gait\n"
    "  --gif FILE         a looping GIF animation (255 colours; small enough for a README)\n"
    "  --apng FILE        a looping animated PNG (lossless; .png or .apng)\n"
    "  --mp4 FILE         an H.264 MP4 video, or VP9 WebM for a name ending .webm; needs the\n"
    "                     ffmpeg program (exit 2 without it)\n"
    "  --frames N         panels of the strip (default 6, at most 64), or frames of an\n"
    "                     animation spread over the whole run (instead of --speed)\n"
    "  --fps N            frames per second of an animation (default 25)\n"
    "  --speed X          simulated seconds per second played (default 1: real time)\n"
    "  --width W          pixels (default 320 per panel, 480 per frame)\n"
    "  --height H         pixels (default 240 per panel; 9/16 of the width per frame)\n"
    "  --hold S           seconds the last frame stays before a GIF or APNG loops (0.5)\n"
    "  --follow           the camera moves with the body (default: fixed on the whole path)\n"
    "A file name whose extension belongs to another format is an error (exit 2).\n"
    "Guide: docs/viewing.md.\n";

static const char *sweep_help =
    "usage: modalloco sweep SWEEP.json [--out ROOT] [--jobs N] [--threads N] [--quiet]\n"
    "                                  [--dry-run [--json]] [--force]\n"
    "                                  [--slurm FILE [--slurm-max-running N]]\n"
    "\n"
    "Expands SWEEP.json ({\"base\": CONFIG|MESH|{...}, \"grid\": {\"KEY\": [values]},\n"
    "\"list\": [{\"KEY\": value}], \"seeds\": [1, 2], \"args\": [\"KEY=VALUE\"]}) into runs\n"
    "ROOT/run_0000, ... (every grid point x list entry x seed) and runs them here (under\n"
    "mpirun each run uses every process). Complete runs are skipped and interrupted ones\n"
    "resumed, so the same command continues a sweep. Writes ROOT/runs.csv,\n"
    "ROOT/manifest.tsv and ROOT/run_NNNN/run.json. Guide: docs/cluster.md.\n"
    "\n"
    "  --out ROOT         output root (default: \"out\" in the file, else sweep-out)\n"
    "  --jobs N           run N runs at a time, each its own process writing its progress to\n"
    "                     ROOT/run_NNNN/optimize.log (default 1: one after the other, in this\n"
    "                     process); the results are the same files for any N\n"
    "  --threads N        threads of each run (parallel.threads; default: the run's setting,\n"
    "                     or with --jobs the cores divided by N)\n"
    "  --quiet            no progress output (of the sweep and of its runs)\n"
    "  --dry-run          list the runs and their state; write nothing\n"
    "  --json             with --dry-run: one JSON document of the runs on stdout\n"
    "  --force            redo runs whose directory holds another configuration\n"
    "  --slurm FILE       write a Slurm job-array script (one task per run) instead of running\n"
    "  --slurm-max-running N  at most N array tasks at once (the script's array line ends %N)\n";

static const char *summarize_help =
    "usage: modalloco summarize DIR... [--out FILE.csv] [--json] [--gallery]\n"
    "\n"
    "Reads optimize output directories or sweep roots (their run_* subdirectories). Without\n"
    "--out: one CSV row per run on stdout (the swept settings, seed, J, displacement, J_align,\n"
    "generations, wall seconds, found, status). With --out: FILE.csv (those rows), FILE.svg (a\n"
    "bar per run), FILE_groups.csv (per setting across seeds: n, median, min and max J,\n"
    "credible, robust and full-space k/n) and FILE_by_setting.svg (J against each swept key),\n"
    "and the groups as a table on stdout.\n"
    "\n"
    "  --json             one JSON document on stdout instead ({\"keys\", \"groups\", \"runs\"})\n"
    "  --gallery          also ROOT/index.html: every run's film strip, grouped, with the\n"
    "                     numbers and plots (one ROOT; --out defaults to ROOT/summary.csv)\n";

static const char *completion_help =
    "usage: modalloco completion bash\n"
    "\n"
    "Prints a bash completion script for this version of modalloco: commands, each command's\n"
    "options, and the configuration keys after --set. Installed as\n"
    "share/bash-completion/completions/modalloco; for one shell:\n"
    "  source <(modalloco completion bash)\n";

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

static void sink_say(void *user, int to_stdout, const char *text) {
    (void)user;
    fputs(text, to_stdout ? stdout : stderr);
}

static int sink_fail(void *user, mlc_status s, const mlc_err *err) {
    (void)user;
    return mlc_cli_fail(s, err);
}

mlc_sink mlc_cli_sink(void) {
    mlc_sink k = {NULL, sink_say, sink_fail, isatty(STDERR_FILENO)};
    return k;
}

int mlc_cli_print_json(cJSON *o) {
    char *text = o ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!text) return mlc_cli_fail(MLC_ENOMEM, NULL);
    puts(text);
    cJSON_free(text);
    return 0;
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
    mlc_status s = mlc_config_input(cfg, opt->input, err);
    if (s != MLC_OK) return s;
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

/* `modalloco --version`: the version and the features this build has. */
static int print_version(void) {
    printf("modalloco %s\n", MLC_VERSION);
#ifdef _OPENMP
    printf("features: openmp");
#else
    printf("features: (no openmp)");
#endif
    printf(mlc_dist_compiled() ? " mpi\n" : " (no mpi)\n");
    const char *core = mlc_blas_core_name();
    printf("blas: %s\n", core ? core : "not OpenBLAS");
    return 0;
}

/* ---- Commands and their options ------------------------------------------------------ */
static int cmd_completion(const mlc_cli_options *opt);

/* Every command: its help text, entry point and the options it documents. `options` is
 * space-separated; "=KIND" marks an option that takes a value, KIND saying what a shell
 * completes for it: d a directory, f a file, k a configuration key, nothing any value.
 * --help is every command's. parse_arg is the parser; this table gives the hints for a
 * mistyped option and the completion script, and tests/cli_completion.sh checks that it
 * agrees with the parser and with the help texts. */
typedef struct command {
    const char *name;
    const char *const *help; /* the address of its help text (a variable, not a constant) */
    int (*run)(const mlc_cli_options *);
    const char *options;
} command;

static const command commands[] = {
    {"info", &info_help, mlc_cmd_info, "--json --set=k"},
    {"modes", &modes_help, mlc_cmd_modes, "--out=d --set=k --force --quiet --max-memory="},
    {"simulate", &simulate_help, mlc_cmd_simulate,
     "--out=d --set=k --full-space --expect=f --tolerance= --json --force --quiet "
     "--max-memory="},
    {"optimize", &optimize_help, mlc_cmd_optimize,
     "--out=d --set=k --seed= --threads= --resume=d --quiet --dry-run --json --force "
     "--max-memory="},
    {"sweep", &sweep_help, mlc_cmd_sweep,
     "--out=d --jobs= --slurm=f --slurm-max-running= --dry-run --json --force --threads= "
     "--quiet"},
    {"summarize", &summarize_help, mlc_cmd_summarize, "--out=f --json --gallery"},
    {"view", &view_help, mlc_cmd_view,
     "--png=f --gif=f --apng=f --mp4=f --frames= --fps= --speed= --width= --height= --hold= "
     "--follow"},
    {"completion", &completion_help, cmd_completion, ""},
};
enum { NCOMMANDS = (int)(sizeof commands / sizeof commands[0]) };

static const command *find_command(const char *name) {
    for (int k = 0; k < NCOMMANDS; k++)
        if (!strcmp(name, commands[k].name)) return &commands[k];
    return NULL;
}

/* The next option of an options string: its name (*len bytes at *name) and value kind ('-'
 * none, '=' any value, or d, f, k as in `commands`); 0 after the last. */
static int next_option(const char **p, const char **name, size_t *len, char *kind) {
    const char *q = *p;
    while (*q == ' ')
        q++;
    if (!*q) return 0;
    const char *e = q;
    while (*e && *e != ' ' && *e != '=')
        e++;
    *name = q, *len = (size_t)(e - q), *kind = '-';
    if (*e == '=') {
        e++;
        *kind = *e && *e != ' ' ? *e++ : '=';
    }
    *p = e;
    return 1;
}

/* Whether the options string has option `name`. */
static int has_option(const char *options, const char *name) {
    const char *o;
    size_t n;
    char kind;
    while (next_option(&options, &o, &n, &kind))
        if (n == strlen(name) && !strncmp(o, name, n)) return 1;
    return 0;
}

/* "Did you mean": of the candidates offered (nearest_offer), the one with the fewest edits
 * from `typed`, kept when near enough to be a plausible typo: at most max(2, length / 3)
 * edits, the rule of the configuration keys' hint (config.c). */
typedef struct nearest {
    const char *typed;
    int dist;
    char best[48];
} nearest;

static void nearest_offer(nearest *n, const char *cand, size_t len) {
    char c[sizeof n->best];
    if (len >= sizeof c) return;
    memcpy(c, cand, len);
    c[len] = 0;
    int d = mlc_edit_distance(n->typed, c);
    if (d < n->dist) n->dist = d, memcpy(n->best, c, len + 1);
}

static const char *nearest_found(const nearest *n) {
    return n->dist <= MLC_MAX(2, (int)strlen(n->typed) / 3) ? n->best : NULL;
}

static int unknown_command(const char *name) {
    nearest n = {name, 1 << 30, ""};
    const char *extra[] = {"help", "--help", "--version"};
    for (int k = 0; k < NCOMMANDS; k++)
        nearest_offer(&n, commands[k].name, strlen(commands[k].name));
    for (size_t k = 0; k < sizeof extra / sizeof extra[0]; k++)
        nearest_offer(&n, extra[k], strlen(extra[k]));
    const char *near = nearest_found(&n);
    char msg[160];
    snprintf(msg, sizeof msg, "unknown command '%.60s'%s%s%s", name, near ? "; did you mean '" : "",
             near ? near : "", near ? "'?" : "");
    return usage_error(NULL, "%s", msg);
}

/* An option `name` (as typed, without "=value") that `cmd` does not take: the nearest of its
 * own, or the commands that do take it. */
static int unknown_option(const char *cmd, const char *name, const char *arg) {
    char msg[400];
    int len = snprintf(msg, sizeof msg, "unknown option '%.60s'", arg), listed = 0;
    /* An option of other commands (simulate --seed): name them, that is the likelier slip. */
    for (int k = 0; k < NCOMMANDS; k++)
        if (has_option(commands[k].options, name) && len < (int)sizeof msg)
            len += snprintf(msg + len, sizeof msg - (size_t)len, "%s%s",
                            listed++ ? ", " : " for this command; it is an option of ",
                            commands[k].name);
    if (listed) return usage_error(cmd, "%s", msg);
    nearest n = {name, 1 << 30, ""};
    const char *p = find_command(cmd)->options, *o;
    size_t olen;
    char kind;
    while (next_option(&p, &o, &olen, &kind))
        nearest_offer(&n, o, olen);
    nearest_offer(&n, "--help", 6);
    const char *near = nearest_found(&n);
    if (near) snprintf(msg + len, sizeof msg - (size_t)len, "; did you mean '%s'?", near);
    return usage_error(cmd, "%s", msg);
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
    } else if (!strcmp(cmd, "view") && (!strcmp(name, "--png") || !strcmp(name, "--gif") ||
                                        !strcmp(name, "--apng") || !strcmp(name, "--mp4"))) {
        NEED_VALUE();
        const char **slot = name[2] == 'p'   ? &opt->png
                            : name[2] == 'g' ? &opt->gif
                            : name[2] == 'a' ? &opt->apng
                                             : &opt->mp4;
        *slot = val;
    } else if (!strcmp(name, "--frames") && !strcmp(cmd, "view")) {
        NEED_VALUE();
        long long n;
        if (!parse_long(val, 1, 5000, &n))
            return usage_error(cmd,
                               "--frames expects an integer: 1..64 panels of the film strip, "
                               "2..5000 frames of an animation; got '%s'",
                               val);
        opt->frames = (int)n;
    } else if (!strcmp(name, "--fps") && !strcmp(cmd, "view")) {
        NEED_VALUE();
        long long n;
        if (!parse_long(val, 1, 100, &n))
            return usage_error(cmd, "--fps expects an integer 1..100, got '%s'", val);
        opt->fps = (int)n;
    } else if ((!strcmp(name, "--width") || !strcmp(name, "--height")) && !strcmp(cmd, "view")) {
        NEED_VALUE();
        long long n;
        if (!parse_long(val, 16, 4096, &n))
            return usage_error(cmd, "--width and --height expect pixels 16..4096, got '%s'", val);
        *(name[2] == 'w' ? &opt->width : &opt->height) = (int)n;
    } else if ((!strcmp(name, "--speed") || !strcmp(name, "--hold")) && !strcmp(cmd, "view")) {
        NEED_VALUE();
        int speed = name[2] == 's';
        char *end;
        errno = 0;
        double v = strtod(val, &end);
        if (errno || end == val || *end || !isfinite(v) ||
            (speed ? !(v >= 0.01 && v <= 100) : !(v >= 0 && v <= 60)))
            return usage_error(cmd,
                               speed ? "--speed expects a number 0.01..100 (simulated seconds "
                                       "per second played; 1 = real time), got '%s'"
                                     : "--hold expects a number of seconds 0..60, got '%s'",
                               val);
        if (speed)
            opt->speed = v, opt->speed_set = 1;
        else
            opt->hold = v, opt->hold_set = 1;
    } else if (!strcmp(name, "--follow") && !strcmp(cmd, "view")) {
        opt->follow = 1;
    } else if (!strcmp(name, "--quiet") || !strcmp(name, "-q")) {
        opt->quiet = 1;
    } else if (!strcmp(name, "--json") &&
               (!strcmp(cmd, "info") || !strcmp(cmd, "optimize") || !strcmp(cmd, "simulate") ||
                !strcmp(cmd, "summarize") || !strcmp(cmd, "sweep"))) {
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
    } else if (!strcmp(name, "--jobs") && !strcmp(cmd, "sweep")) {
        NEED_VALUE();
        long long n;
        if (!parse_long(val, 1, 4096, &n))
            return usage_error(cmd, "--jobs expects a number of runs at a time, 1..4096, got '%s'",
                               val);
        opt->jobs = (int)n;
    } else if (!strcmp(name, "--slurm-max-running") && !strcmp(cmd, "sweep")) {
        NEED_VALUE();
        long long n;
        if (!parse_long(val, 1, 4096, &n))
            return usage_error(
                cmd, "--slurm-max-running expects a number of tasks 1..4096, got '%s'", val);
        opt->slurm_max_running = (int)n;
    } else if (!strcmp(name, "--gallery") && !strcmp(cmd, "summarize")) {
        opt->gallery = 1;
    } else if (a[0] == '-' && a[1] != 0) {
        return unknown_option(cmd, name, a);
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
    if (!strcmp(opt->command, "completion") && !opt->input)
        return usage_error("completion", "%s", "completion needs a shell name: bash");
    if (opt->json && opt->dry_run && !strcmp(opt->command, "optimize"))
        return usage_error(opt->command, "%s",
                           "--json prints the run's result.json, which --dry-run does not "
                           "write; drop one of them");
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

/* ---- Shell completion ------------------------------------------------------------------ */
/* The names of an options string, space-separated, then " --help". */
static void print_option_names(FILE *f, const char *options) {
    const char *o;
    size_t n;
    char kind;
    while (next_option(&options, &o, &n, &kind))
        fprintf(f, "%.*s ", (int)n, o);
    fputs("--help", f);
}

/* The `case $prev in` arms for the options of `options` that take a value of kind `kind`. */
static void print_value_arm(FILE *f, const char *options, char kind, const char *action) {
    const char *o;
    size_t n;
    char k;
    int any = 0;
    while (next_option(&options, &o, &n, &k))
        if (k == kind) fprintf(f, "%s%.*s", any++ ? "|" : "            ", (int)n, o);
    if (any) fprintf(f, ") %s%sreturn 0 ;;\n", action, *action ? "; " : "");
}

/* `modalloco completion bash`: a bash completion script made from the command table and the
 * configuration key table, so it matches this binary's commands, options and keys. Words are
 * split by bash's COMP_WORDBREAKS, which holds '=': `--set=KEY` and `--set KEY=VALUE` arrive
 * as separate words around a "=". */
static int cmd_completion(const mlc_cli_options *opt) {
    if (strcmp(opt->input, "bash") != 0)
        return usage_error("completion", "completion supports the shell 'bash', got '%s'",
                           opt->input);
    FILE *f = stdout;
    fprintf(f,
            "# bash completion for modalloco %s, printed by `modalloco completion bash`:\n"
            "# commands, each command's options, and configuration keys after --set.\n"
            "_modalloco_keys=\"",
            MLC_VERSION);
    for (int s = 0; s < mlc_config_nsections; s++)
        for (int i = 0; i < mlc_config_sections[s].keys->nkeys; i++)
            fprintf(f, "%s%s", s || i ? " " : "", mlc_config_sections[s].keys->keys[i].name);
    fputs("\"\n_modalloco_commands=\"", f);
    for (int k = 0; k < NCOMMANDS; k++)
        fprintf(f, "%s%s", k ? " " : "", commands[k].name);
    fputs("\"\n"
          "_modalloco_files() { # $1: -f files (and directories) or -d directories; $2: prefix\n"
          "    local IFS=$'\\n'\n"
          "    compopt -o filenames 2>/dev/null\n"
          "    COMPREPLY=($(compgen \"$1\" -- \"$2\"))\n"
          "}\n"
          "_modalloco() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local cmd=${COMP_WORDS[1]} opts eq=0\n"
          "    COMPREPLY=()\n"
          "    if [ \"$cur\" = \"=\" ]; then\n"
          "        cur= eq=1\n"
          "    elif [ \"$prev\" = \"=\" ] && [ \"$COMP_CWORD\" -ge 3 ]; then\n"
          "        prev=${COMP_WORDS[COMP_CWORD-2]} eq=1\n"
          "    fi\n"
          "    # after --set KEY=: a value, which has no list\n"
          "    if [ $eq = 1 ] && [ \"${prev#--}\" = \"$prev\" ]; then return 0; fi\n"
          "    if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
          "        COMPREPLY=($(compgen -W \"$_modalloco_commands help --help --version\" \\\n"
          "            -- \"$cur\"))\n"
          "        return 0\n"
          "    fi\n"
          "    case $cmd in\n"
          "    help)\n"
          "        [ \"$COMP_CWORD\" -eq 2 ] &&\n"
          "            COMPREPLY=($(compgen -W \"$_modalloco_commands\" -- \"$cur\"))\n"
          "        return 0 ;;\n"
          "    completion)\n"
          "        [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W \"bash\" -- \"$cur\"))\n"
          "        return 0 ;;\n",
          f);
    for (int k = 0; k < NCOMMANDS; k++) {
        const char *o = commands[k].options;
        if (commands[k].run == cmd_completion) continue;
        fprintf(f, "    %s)\n        case $prev in\n", commands[k].name);
        print_value_arm(f, o, 'k',
                        "compopt -o nospace 2>/dev/null; "
                        "COMPREPLY=($(compgen -W \"$_modalloco_keys\" -S = -- \"$cur\"))");
        print_value_arm(f, o, 'd', "_modalloco_files -d \"$cur\"");
        print_value_arm(f, o, 'f', "_modalloco_files -f \"$cur\"");
        print_value_arm(f, o, '=', "");
        fputs("        esac\n        opts=\"", f);
        print_option_names(f, o);
        fputs("\" ;;\n", f);
    }
    fputs("    *) return 0 ;;\n"
          "    esac\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
          "    else\n"
          "        _modalloco_files -f \"$cur\"\n"
          "    fi\n"
          "}\n"
          "complete -F _modalloco modalloco\n",
          f);
    return fflush(f) == 0 && !ferror(f) ? 0 : 1;
}

/* ---- --json on optimize and simulate ------------------------------------------------- */
/* The original stdout while --json is in effect (json_begin), else -1. */
static int json_fd = -1;

/* optimize/simulate --json: stdout carries one JSON document and nothing else. File
 * descriptor 1 is pointed at stderr's file for the whole run, so every line the command or a
 * library under it prints on stdout (the key-value summary, the --expect report) reaches
 * stderr and no code path can add a stray line; the document goes to the original stdout at
 * the end (mlc_cli_print_result_json). Returns 0 when the descriptors cannot be set up. */
static int json_begin(void) {
    setvbuf(stdout, NULL, _IOLBF, 0); /* interleave with stderr line by line, as on a terminal */
    json_fd = dup(STDOUT_FILENO);
    return json_fd >= 0 && dup2(STDERR_FILENO, STDOUT_FILENO) >= 0;
}

/* DIR/NAME's bytes (*buf, owned, mlc_free; *n of them), checked to parse as JSON; MLC_OK or
 * the reason in err. */
static mlc_status read_json(const char *dir, const char *name, char **buf, size_t *n,
                            mlc_err *err) {
    char *path = mlc_path_join_alloc(dir, name);
    *buf = NULL, *n = 0;
    if (!path) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    mlc_status s =
        mlc_file_read_all(path, (size_t)64 << 20, "not a result of this program", buf, n, err);
    cJSON *j = s == MLC_OK ? cJSON_ParseWithLength(*buf, *n) : NULL;
    if (s == MLC_OK && !j)
        s = mlc_errf(err, MLC_EIO, "%s: cannot read back what this run wrote (malformed JSON)",
                     path);
    cJSON_Delete(j);
    mlc_free(path);
    if (s != MLC_OK) mlc_free(*buf), *buf = NULL;
    return s;
}

/* Write len bytes to the saved stdout; 0 or errno. */
static int json_write(const char *text, size_t len) {
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(json_fd, text + done, len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : EIO;
        done += (size_t)w;
    }
    return 0;
}

/* The files' bytes as they are, not parsed and printed again: cJSON prints a number with 15
 * digits when that reads back within an epsilon, which loses the last bits of result.json's
 * exact numbers. With fullspace.json, result.json's object gets it as one more member. */
mlc_status mlc_cli_print_result_json(const char *dir, int with_fullspace, mlc_err *err) {
    if (json_fd < 0) return MLC_OK;
    char *res = NULL, *full = NULL;
    size_t nres = 0, nfull = 0;
    mlc_status s = read_json(dir, "result.json", &res, &nres, err);
    if (s == MLC_OK && with_fullspace) s = read_json(dir, "fullspace.json", &full, &nfull, err);
    if (s != MLC_OK) {
        mlc_free(res);
        return s;
    }
    while (nres > 0 && strchr(" \t\r\n", res[nres - 1]))
        nres--;
    while (nfull > 0 && strchr(" \t\r\n", full[nfull - 1]))
        nfull--;
    if (full && (nres == 0 || res[nres - 1] != '}')) {
        mlc_free(res), mlc_free(full);
        return mlc_errf(err, MLC_EIO, "%s/result.json: not a JSON object", dir);
    }
    fflush(stdout); /* the summary lines, on stderr, come before the document */
    int e;
    if (full) { /* result.json is an object: its closing brace ends the text */
        static const char member[] = ",\n\t\"fullspace\":\t";
        e = json_write(res, nres - 1);
        if (!e) e = json_write(member, sizeof member - 1);
        if (!e) e = json_write(full, nfull);
        if (!e) e = json_write("\n}\n", 3);
    } else {
        e = json_write(res, nres);
        if (!e) e = json_write("\n", 1);
    }
    mlc_free(res), mlc_free(full);
    if (e) return mlc_errf(err, MLC_EIO, "stdout: cannot write the JSON document: %s", strerror(e));
    return MLC_OK;
}

/* `modalloco help [COMMAND]`: the help of the program or of one command, on stdout. */
static int help_command(int argc, char **argv) {
    if (argc > 3) return usage_error(NULL, "help takes one COMMAND, got also '%s'", argv[3]);
    if (argc < 3 || !strcmp(argv[2], "help")) {
        fputs(program_help, stdout);
        return 0;
    }
    const command *c = find_command(argv[2]);
    if (!c) return unknown_command(argv[2]);
    fputs(*c->help, stdout);
    return 0;
}

int mlc_cli_main(int argc, char **argv) {
    mlc_blas_choose_kernels(argv);
    /* One BLAS thread: ours run across rollouts, and a threaded BLAS would sum in an order
     * that depends on the machine's thread count (measured no faster on our sizes). */
    mlc_blas_pin_threads();
    if (argc < 2) {
        fputs(program_help, stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(program_help, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "help")) return help_command(argc, argv);
    if (!strcmp(argv[1], "--version")) return print_version();
    mlc_cli_options opt;
    memset(&opt, 0, sizeof opt);
    opt.command = argv[1];
    const command *c = find_command(opt.command);
    if (!c) return unknown_command(opt.command);
    int rc;
    for (int i = 2; i < argc; i++)
        if ((rc = parse_arg(&opt, *c->help, argc, argv, &i)) >= 0) return rc;
    if ((rc = check_required(&opt)) >= 0 || (rc = refuse_parallel_launch(&opt, c->run)) >= 0)
        return rc;
    /* Only these two: info prints its own JSON, and other commands' --json is theirs. */
    if (opt.json && (c->run == mlc_cmd_optimize || c->run == mlc_cmd_simulate) && !json_begin()) {
        mlc_err err = {0};
        mlc_errf(&err, MLC_EIO, "--json: cannot set up stdout: %s", strerror(errno));
        return mlc_cli_fail(MLC_EIO, &err);
    }
    rc = c->run(&opt);
    mlc_dist_finalize(); /* only if a command started MPI (under mpirun/srun) */
    return rc;
}
