/* make_manpage.c: writes the modalloco(1) manual page to stdout. The configuration section
 * is generated from the modules' key tables (keys.h), the same rows the program validates
 * against, so the page lists every setting with its real default and range. Built and run by CMake.
 */
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "config.h"

/* roff needs backslashes doubled and a leading '.' or '\'' escaped. */
static void roff(const char *s) {
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", stdout);
        else if (*s == '-')
            fputs("\\-", stdout);
        else
            putchar(*s);
    }
}

static const char *head =
    ".TH MODALLOCO 1 \"2026\" \"modalloco " MLC_VERSION "\" \"User Commands\"\n"
    ".SH NAME\n"
    "modalloco \\- find gaits for soft\\-body characters with reduced simulation and CMA\\-ES\n"
    ".SH SYNOPSIS\n"
    ".B modalloco info\n.I MESH\n[\\fB\\-\\-json\\fR]\n.br\n"
    ".B modalloco modes\n[\\fICONFIG\\fR|\\fIMESH\\fR] [\\fB\\-\\-out\\fR \\fIDIR\\fR] "
    "[\\fB\\-\\-set\\fR \\fIKEY\\fR=\\fIVALUE\\fR]...\n.br\n"
    ".B modalloco simulate\n[\\fICONFIG\\fR|\\fIPARAMS\\fR] [\\fB\\-\\-out\\fR \\fIDIR\\fR] "
    "[\\fB\\-\\-set\\fR \\fIKEY\\fR=\\fIVALUE\\fR]... [\\fB\\-\\-full\\-space\\fR] "
    "[\\fB\\-\\-json\\fR]\n.br\n"
    ".B modalloco optimize\n[\\fICONFIG\\fR|\\fIMESH\\fR] [\\fB\\-\\-out\\fR \\fIDIR\\fR] "
    "[\\fB\\-\\-set\\fR \\fIKEY\\fR=\\fIVALUE\\fR]... [\\fB\\-\\-seed\\fR \\fIN\\fR] "
    "[\\fB\\-\\-threads\\fR \\fIN\\fR] [\\fB\\-\\-resume\\fR \\fIDIR\\fR] [\\fB\\-\\-quiet\\fR] "
    "[\\fB\\-\\-dry\\-run\\fR] [\\fB\\-\\-json\\fR]\n.br\n"
    ".B modalloco sweep\n.I SWEEP.json\n[\\fB\\-\\-out\\fR \\fIROOT\\fR] "
    "[\\fB\\-\\-slurm\\fR \\fIFILE\\fR] [\\fB\\-\\-dry\\-run\\fR]\n.br\n"
    ".B modalloco summarize\n\\fIDIR\\fR... [\\fB\\-\\-out\\fR \\fIFILE.csv\\fR]\n.br\n"
    ".B modalloco view\n.I DIR\n[\\fB\\-\\-png\\fR \\fIFILE\\fR]\n.br\n"
    ".B modalloco completion bash\n.br\n"
    ".B modalloco\n\\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR | \\fICOMMAND\\fR "
    "\\fB\\-\\-help\\fR | \\fBhelp\\fR [\\fICOMMAND\\fR]\n"
    ".SH DESCRIPTION\n"
    "modalloco makes soft\\-body characters walk. From a tetrahedral mesh (or a closed surface,\n"
    "tetrahedralized with tetgen) it builds a simulation subspace of skinning eigenmodes and an\n"
    "actuation subspace of vibration modes, and searches sinusoidal actuation signals with\n"
    "CMA\\-ES, scoring each candidate with a reduced local\\-global soft\\-body simulation with\n"
    "ground contact. Results go to stdout, diagnostics and progress to stderr.\n"
    ".SH COMMANDS\n"
    ".TP\n.B info\nRead, validate and repair a mesh; print vertices, tets, boundary faces, "
    "volume,\n"
    "bounding box, tet volumes, smallest dihedral angle, flipped tets, components and the\n"
    "preparation transform (\\fB\\-\\-json\\fR: one JSON object).\n"
    ".TP\n.B modes\nCompute the subspaces and write modes.json, mode_I.pc2 (one oscillation cycle "
    "per\n"
    "vibration mode, with surface.obj), weight_B.ply, clusters.ply and subspace.vtk.\n"
    ".TP\n.B simulate\nRun one rollout with the parameters of a params.json written by optimize, "
    "or of\n"
    "actuation.parameters in a configuration; write trajectory.csv, surface.obj,\n"
    "animation.pc2 and result.json. Without \\fB\\-\\-out\\fR, DIR/params.json replays into\n"
    "DIR/replay. \\fB\\-\\-full\\-space\\fR also runs the full\\-space reference simulator;\n"
    "\\fB\\-\\-expect\\fR \\fIRESULT.json\\fR [\\fB\\-\\-tolerance\\fR \\fIT\\fR] compares the "
    "rollout "
    "with a stored result\n(J, its terms, the final centre of mass) and exits 1, naming what "
    "differs.\n"
    "Prints the objective terms and the gait's credibility, and warns when it is not "
    "credible.\n"
    ".TP\n.B optimize\nSearch a gait; write params.json, history.csv (as the run goes), "
    "history.svg,\n"
    "checkpoint.bin and the best gait's rollout. SIGINT and SIGTERM save a checkpoint and exit\n"
    "with 130; \\fB\\-\\-resume\\fR \\fIDIR\\fR continues and ends with exactly the result of an\n"
    "uninterrupted run. The same seed gives the same result for any \\fB\\-\\-threads\\fR.\n"
    "Prints the objective terms, the credibility of the gait and whether a credible gait was "
    "found;\nexits with 3 when none was (the outputs are still written).\n"
    "\\fB\\-\\-dry\\-run\\fR validates, precomputes, times one generation and prints the "
    "estimated wall time.\nUnder mpirun the rollouts of each generation are spread over the "
    "processes.\n"
    ".TP\n.B sweep\n\\fISWEEP.json\\fR [\\fB\\-\\-out\\fR \\fIROOT\\fR] [\\fB\\-\\-jobs\\fR "
    "\\fIN\\fR] [\\fB\\-\\-slurm\\fR \\fIFILE\\fR [\\fB\\-\\-slurm\\-max\\-running\\fR "
    "\\fIN\\fR]] [\\fB\\-\\-dry\\-run\\fR [\\fB\\-\\-json\\fR]]: expand a grid or list of "
    "settings and seeds into run directories and run them here, N at a time (complete runs "
    "are skipped; the results are the same for any N), or write a Slurm job\\-array script.\n"
    ".TP\n.B summarize\n\\fIDIR\\fR... [\\fB\\-\\-out\\fR \\fIFILE.csv\\fR] "
    "[\\fB\\-\\-json\\fR] [\\fB\\-\\-gallery\\fR]: one CSV row per "
    "run (overrides, seed, J, displacement, J_align, generations, seconds, found, status); with "
    "\\fB\\-\\-out\\fR also the runs grouped by setting across seeds (n, median, min and max "
    "J, credible k/n), a chart and a plot of J against each swept key; "
    "\\fB\\-\\-gallery\\fR writes ROOT/index.html with every run's film strip.\n"
    ".TP\n.B view\n\\fIDIR\\fR [\\fB\\-\\-png\\fR|\\fB\\-\\-gif\\fR|\\fB\\-\\-apng\\fR|"
    "\\fB\\-\\-mp4\\fR \\fIFILE\\fR]... [\\fB\\-\\-frames\\fR \\fIN\\fR] "
    "[\\fB\\-\\-fps\\fR \\fIN\\fR] [\\fB\\-\\-speed\\fR \\fIX\\fR] "
    "[\\fB\\-\\-width\\fR \\fIW\\fR] [\\fB\\-\\-height\\fR \\fIH\\fR] "
    "[\\fB\\-\\-hold\\fR \\fIS\\fR] [\\fB\\-\\-follow\\fR]: "
    "write DIR/view.html, a self\\-contained WebGL player of the gait; or render a PNG film "
    "strip of N panels, a looping GIF or animated PNG, or an MP4 (WebM for a .webm name, "
    "through the ffmpeg program) at the run's real speed (\\fB\\-\\-speed\\fR), each "
    "frame with the ground, the task and the simulated time. A file name whose extension "
    "belongs to another of these options is refused (exit 2).\n"
    ".TP\n.B completion\n\\fBbash\\fR: print a bash completion script for this version "
    "(commands, options, and the configuration keys after \\fB\\-\\-set\\fR); installed as "
    "share/bash\\-completion/completions/modalloco.\n"
    ".TP\n.B help\n[\\fICOMMAND\\fR]: the same as \\fB\\-\\-help\\fR, or as "
    "\\fICOMMAND\\fR \\fB\\-\\-help\\fR.\n"
    ".SH OPTIONS\n"
    ".TP\n\\fB\\-\\-set\\fR \\fIKEY\\fR=\\fIVALUE\\fR\nOverride one setting (repeatable, applied "
    "in "
    "order after the configuration file). VALUE is JSON when it parses (3, true, [0,\\-1,0]),\n"
    "else a bare string.\n"
    ".TP\n\\fB\\-\\-out\\fR \\fIDIR\\fR\nOutput directory (output.dir). A directory holding a run "
    "with "
    "another configuration is refused unless \\fB\\-\\-force\\fR is given.\n"
    ".TP\n\\fB\\-\\-seed\\fR \\fIN\\fR, \\fB\\-\\-threads\\fR \\fIN\\fR\ncmaes.seed and "
    "parallel.threads.\n"
    ".TP\n\\fB\\-\\-quiet\\fR\nNo progress output.\n"
    ".TP\n\\fB\\-\\-json\\fR\n(simulate, optimize) Print the run's result.json (simulate "
    "\\fB\\-\\-full\\-space\\fR: with fullspace.json as member \"fullspace\") as the only "
    "output on stdout; the summary lines go to stderr. Nothing is printed on stdout when the run "
    "fails or is interrupted.\n";

static const char *tail =
    ".SH FILES\n"
    ".TP\n.I config.json\nThe effective, complete configuration (all commands).\n"
    ".TP\n.I params.json\nBest parameters, objective terms, found, seed, version, mesh checksum "
    "and transform, configuration.\n"
    ".TP\n.I "
    "history.csv\ngeneration,evaluations,best_J,median_J,sigma,seconds,best_ever_J,failed,mean_J,"
    "rollouts,restart,population\n"
    ".TP\n.I trajectory.csv\n"
    "frame,time,com_x,com_y,com_z,forward_x,forward_y,forward_z,contacts,up_x,up_y,up_z\n.br\n"
    "One row per output frame: the centre of mass, the body's forward direction, the number of "
    "contact samples on the ground, and the body's up axis R(t)y (a roll or tumble shows as "
    "up_y < 0).\n"
    ".TP\n.IR surface.obj \" and \" animation.pc2\nRest surface and Blender Point Cache 2 "
    "(Blender: import the OBJ, add a Mesh Cache modifier with the PC2).\n"
    ".TP\n.I result.json\nJ, J_disp, J_align, J_work, displacement of one rollout, and its "
    "credibility\n(rise, airborne, penetration, up_min, robustness, credible); optimize adds "
    "found.\n"
    ".TP\n.I share/modalloco/data/quadruped.mesh\nThe bundled sample mesh used when mesh.path "
    "is empty.\n"
    ".SH EXIT STATUS\n"
    "0 success; 1 runtime failure (numerical breakdown, I/O error while writing); 2 usage or\n"
    "input error (bad option, bad file, bad setting); 3 optimize ran to the end but found no\n"
    "credible gait (outputs written, \"found\": false); 130 interrupted by a signal after\n"
    "saving what can be resumed.\n"
    ".SH EXAMPLES\n"
    ".nf\nmodalloco info bat.off\nmodalloco optimize bat.off \\-\\-out bat \\-\\-seed 3 "
    "\\-\\-set actuation.modes=3\nmodalloco simulate bat/params.json\n"
    "modalloco optimize \\-\\-resume bat\n.fi\n"
    "Example configurations for every experiment of the paper are installed under\n"
    ".IR share/modalloco/examples .\n";

int main(void) {
    fputs(head, stdout);
    fputs(".SH CONFIGURATION\n"
          "A JSON object of sections; every key optional (defaults below). A top\\-level\n"
          "\"comment\" (string or array of strings) is ignored.\n",
          stdout);
    for (int s = 0; s < mlc_config_nsections; s++)
        for (int i = 0; i < mlc_config_sections[s].keys->nkeys; i++) {
            const mlc_key *k = &mlc_config_sections[s].keys->keys[i];
            fputs(".TP\n.B ", stdout);
            roff(k->name);
            fputs("\n", stdout);
            roff(k->meaning);
            fputs(". Type ", stdout);
            roff(k->type_name);
            fputs(", default ", stdout);
            roff(k->default_json);
            if (k->range && k->range[0]) {
                fputs(", valid ", stdout);
                roff(k->range);
            }
            fputs(".\n", stdout);
        }
    fputs(tail, stdout);
    return 0;
}
