/* gallery.c: the sweep's HTML page and the runs' film strips (gallery.h). */
#include "gallery.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "png.h"
#include "render.h"
#include "viewer.h"

/* Panels of a strip in the page: small, so that a sweep of a hundred runs stays light. */
#define STRIP_FRAMES 5
#define STRIP_PANEL_W 200
#define STRIP_PANEL_H 150

/* ---- Paths ------------------------------------------------------------------------------ */
/* An absolute path for `path` (owned): realpath, else realpath of its directory plus its name
 * (a file not written yet), else the working directory joined with it. */
static char *absolute_path(const char *path) {
    char buf[PATH_MAX];
    if (realpath(path, buf)) return mlc_strdup(buf);
    const char *slash = strrchr(path, '/');
    if (slash && slash != path) {
        char *dir = mlc_strdup(path);
        if (!dir) return NULL;
        dir[slash - path] = 0;
        char *out = realpath(dir, buf) ? mlc_path_join_alloc(buf, slash + 1) : NULL;
        mlc_free(dir);
        if (out) return out;
    }
    if (path[0] == '/') return mlc_strdup(path);
    if (!getcwd(buf, sizeof buf)) return NULL;
    return mlc_path_join_alloc(buf, path);
}

char *mlc_gallery_relative(const char *from, const char *target) {
    char *a = absolute_path(from), *b = absolute_path(target), *out = NULL;
    if (!a || !b) goto done;
    /* The longest common run of whole components: `common` is where both rests begin. */
    size_t i = 0, common = 0;
    while (a[i] && a[i] == b[i])
        if (a[i++] == '/') common = i;
    if (a[i] == 0 && (b[i] == '/' || b[i] == 0))
        common = b[i] ? i + 1 : i; /* the target is inside `from` (or is it) */
    else if (b[i] == 0 && a[i] == '/')
        common = i + 1; /* the target is a directory above `from` */
    const char *ra = a + MLC_MIN(common, strlen(a)), *rb = b + MLC_MIN(common, strlen(b));
    int ups = *ra != 0;
    for (const char *c = ra; *c; c++)
        ups += *c == '/' && c[1] != 0;
    size_t len = 3 * (size_t)ups + strlen(rb) + 2;
    if (!(out = mlc_malloc(len))) goto done;
    out[0] = 0;
    for (int u = 0; u < ups; u++)
        strcat(out, "../");
    if (*rb)
        strcat(out, rb);
    else if (!ups)
        strcat(out, ".");
done:
    mlc_free(a);
    mlc_free(b);
    return out;
}

/* A link target in an attribute: bytes outside a safe set percent-encoded, so that spaces,
 * '#', '?', '%' and quotes in directory names keep the link pointing at the file. */
static void put_href(FILE *f, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("/._~-", c))
            fputc(c, f);
        else
            fprintf(f, "%%%02X", c);
    }
}

/* The modification time of `path`, or -1 when it does not exist. */
static double mtime(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    return (double)st.st_mtim.tv_sec + 1e-9 * (double)st.st_mtim.tv_nsec;
}

/* ---- Film strips ------------------------------------------------------------------------ */
/* Render run `dir`'s film strip into `png`: STRIP_FRAMES panels evenly spread over the
 * animation, the task drawn in green as `view --png` draws it. */
static mlc_status strip_render(const char *dir, const char *png, mlc_err *err) {
    mlc_run run;
    mlc_status s = mlc_run_load(dir, &run, err);
    if (s != MLC_OK) return s;
    int frames[STRIP_FRAMES], n = MLC_MIN(STRIP_FRAMES, run.nframes);
    for (int k = 0; k < n; k++)
        frames[k] = n > 1 ? (int)lrint((double)k * (run.nframes - 1) / (n - 1)) : 0;
    /* The task marks are sized by the rest body: a tenth of its largest extent. */
    double extent = 0;
    for (int c = 0; c < 3; c++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < run.nv; i++)
            lo = fmin(lo, run.rest[3 * i + c]), hi = fmax(hi, run.rest[3 * i + c]);
        extent = fmax(extent, hi - lo);
    }
    mlc_filmstrip_options fo = {
        .panel_w = STRIP_PANEL_W, .panel_h = STRIP_PANEL_H, .ground_y = run.ground_y};
    double *marks = NULL;
    fo.nmarks = mlc_run_task_segments(&run, 0.1 * extent, &marks);
    fo.marks = marks;
    mlc_image im = {0};
    s = mlc_render_filmstrip(run.xyz, run.nv, run.nframes, run.faces, run.nf, frames, n, &fo, &im,
                             err);
    if (s == MLC_OK) s = mlc_png_write(png, im.rgb, im.w, im.h, err);
    mlc_image_free(&im);
    mlc_free(marks);
    mlc_run_free(&run);
    return s;
}

/* Make run r's strip when it is missing or older than its animation. Returns 1 when the page
 * can show it, 0 when the run has none (its note in `why`); MLC_EIO-class failures to write
 * go to *st. */
static int strip_ensure(const mlc_summary_run *r, mlc_gallery_info *info, char *why, size_t cap,
                        mlc_status *st, mlc_err *err) {
    char png[PATH_MAX], pc2[PATH_MAX], obj[PATH_MAX];
    snprintf(png, sizeof png, "%s/strip.png", r->dir);
    snprintf(pc2, sizeof pc2, "%s/animation.pc2", r->dir);
    snprintf(obj, sizeof obj, "%s/surface.obj", r->dir);
    double t_anim = mtime(pc2);
    if (t_anim < 0 || mtime(obj) < 0) {
        snprintf(why, cap, "no animation yet (%s)", r->status);
        info->without++;
        return 0;
    }
    if (mtime(png) >= t_anim) {
        info->strips_kept++;
        return 1;
    }
    mlc_err e = {0};
    mlc_status s = strip_render(r->dir, png, &e);
    if (s == MLC_OK) {
        info->strips_made++;
        return 1;
    }
    info->without++;
    if (s == MLC_EIO) {
        *st = s;
        *err = e;
    }
    snprintf(why, cap, "no film strip: %s", e.msg[0] ? e.msg : mlc_strerror(s));
    return 0;
}

/* ---- The page --------------------------------------------------------------------------- */
static const char *page_style =
    "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1200px}"
    "h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:right}"
    "th{border-bottom:1px solid #999}td:first-child,th:first-child{text-align:left}"
    ".run{margin:0.8em 0}.run img{max-width:100%;display:block;border:1px solid #ddd}"
    ".yes{color:#2e8b3d}.no{color:#c0392b}.note{color:#888}"
    ".plots img{max-width:100%;margin:0.5em 0}";

/* On load: how many images show and how many failed, and whether anything came from
 * elsewhere than the disk (the page should load nothing else). */
static const char *page_script =
    "window.addEventListener('load',function(){var ok=0,bad=0;"
    "Array.prototype.forEach.call(document.images,function(i){"
    "if(i.complete&&i.naturalWidth>0)ok++;else bad++;});"
    "var remote=performance.getEntriesByType('resource').filter(function(e){"
    "return e.name.indexOf('file:')!==0;}).length;var b=document.body;"
    "b.setAttribute('data-images',ok);b.setAttribute('data-broken',bad);"
    "b.setAttribute('data-remote',remote);b.setAttribute('data-ready','1');});";

static void put_fraction(FILE *f, int k, int n) {
    if (n)
        fprintf(f, "%d/%d", k, n);
    else
        fputs("&#8211;", f);
}

static void put_J(FILE *f, double v) {
    if (isnan(v))
        fputs("&#8211;", f);
    else
        fprintf(f, "%.4g", v);
}

/* A link to `target` (a path), shown as `text`, relative to the page's directory. */
static void put_link(FILE *f, const char *dir, const char *target, const char *text) {
    char *rel = mlc_gallery_relative(dir, target);
    if (!rel) return;
    fputs("<a href=\"", f);
    put_href(f, rel);
    fputs("\">", f);
    mlc_xml_escape(f, text);
    fputs("</a>", f);
    mlc_free(rel);
}

static void put_image(FILE *f, const char *dir, const char *target, const char *alt) {
    char *rel = mlc_gallery_relative(dir, target);
    if (!rel) return;
    fputs("<img src=\"", f);
    put_href(f, rel);
    fputs("\" alt=\"", f);
    mlc_xml_escape(f, alt);
    fputs("\">", f);
    mlc_free(rel);
}

/* A group's numbers, each followed by its separator: J median, min, max, credible, robust,
 * full-space kept (as a table row's cells or as a sentence). */
static void put_stats(FILE *f, const mlc_summary_group *G, const char *const sep[6]) {
    put_J(f, G->J_median);
    fputs(sep[0], f);
    put_J(f, G->J_min);
    fputs(sep[1], f);
    put_J(f, G->J_max);
    fputs(sep[2], f);
    put_fraction(f, G->credible_k, G->credible_n);
    fputs(sep[3], f);
    put_fraction(f, G->robust_k, G->robust_n);
    fputs(sep[4], f);
    if (G->transfer_n)
        fprintf(f, "%.3f (%d)", G->transfer_median, G->transfer_n);
    else
        fputs("&#8211;", f);
    fputs(sep[5], f);
}

static void group_row(FILE *f, const mlc_summary_group *G, int g) {
    static const char *const cells[6] = {"</td><td>", "</td><td>", "</td><td>",
                                         "</td><td>", "</td><td>", "</td></tr>\n"};
    fprintf(f, "<tr><td><a href=\"#group-%d\">%d: ", g + 1, g + 1);
    mlc_xml_escape(f, G->label);
    fprintf(f, "</a></td><td>%d</td><td>", G->n);
    put_stats(f, G, cells);
}

static mlc_status run_block(FILE *f, const char *dir, const mlc_summary_run *r,
                            mlc_gallery_info *info, mlc_err *err) {
    const char *slash = strrchr(r->dir, '/');
    const char *name = slash && slash[1] ? slash + 1 : r->dir;
    char why[1100], path[PATH_MAX];
    mlc_status st = MLC_OK;
    int has_strip = strip_ensure(r, info, why, sizeof why, &st, err);
    fputs("<div class=\"run\"><div><b>", f);
    mlc_xml_escape(f, name);
    fputs("</b>", f);
    if (!isnan(r->seed)) fprintf(f, " &#183; seed %.0f", r->seed);
    fputs(" &#183; J = ", f);
    put_J(f, r->J);
    if (r->credible >= 0)
        fputs(r->credible ? " &#183; <span class=\"yes\">credible</span>"
                          : " &#183; <span class=\"no\">not credible</span>",
              f);
    if (isfinite(r->transfer)) fprintf(f, " &#183; full-space kept %.3f", r->transfer);
    snprintf(path, sizeof path, "%s/view.html", r->dir);
    if (mlc_file_exists(path)) fputs(" &#183; ", f), put_link(f, dir, path, "viewer");
    snprintf(path, sizeof path, "%s/gait.gif", r->dir);
    if (mlc_file_exists(path)) fputs(" &#183; ", f), put_link(f, dir, path, "animation");
    fputs("</div>\n", f);
    if (has_strip) {
        char alt[300];
        snprintf(alt, sizeof alt, "film strip of %s", name);
        snprintf(path, sizeof path, "%s/strip.png", r->dir);
        put_image(f, dir, path, alt);
    } else {
        fputs("<div class=\"note\">", f);
        mlc_xml_escape(f, why);
        fputs("</div>", f);
    }
    fputs("</div>\n", f);
    return st;
}

mlc_status mlc_gallery_write(const mlc_summary *sm, const char *dir, const mlc_gallery_files *files,
                             mlc_gallery_info *info, mlc_err *err) {
    memset(info, 0, sizeof *info);
    char *page = mlc_path_join_alloc(dir, "index.html");
    if (!page) return mlc_errf(err, MLC_ENOMEM, "out of memory");
    mlc_afile af = {0};
    mlc_status s = mlc_afile_open(&af, page, err);
    mlc_free(page);
    if (s != MLC_OK) return s;
    FILE *f = af.fp;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n", f);
    fputs("<title>modalloco sweep: ", f);
    mlc_xml_escape(f, dir);
    fprintf(f, "</title>\n<style>%s</style>\n<script>%s</script>\n</head>\n<body>\n", page_style,
            page_script);
    fputs("<h1>modalloco sweep: ", f);
    mlc_xml_escape(f, dir);
    fprintf(f,
            "</h1>\n<p>%d runs in %d groups (the same setting, different seeds). J is "
            "minimized: lower is better.",
            sm->nruns, sm->ngroups);
    const char *csv[2] = {files->runs_csv, files->groups_csv};
    const char *csv_text[2] = {"per run (CSV)", "per group (CSV)"};
    for (int i = 0; i < 2; i++)
        if (csv[i]) fputs(" ", f), put_link(f, dir, csv[i], csv_text[i]);
    fputs("</p>\n<table><tr><th>group</th><th>n</th><th>J median</th><th>J min</th>"
          "<th>J max</th><th>credible</th><th>robust</th><th>full-space kept</th></tr>\n",
          f);
    for (int g = 0; g < sm->ngroups; g++)
        group_row(f, &sm->groups[g], g);
    fputs("</table>\n<div class=\"plots\">\n", f);
    if (files->plot_svg) put_image(f, dir, files->plot_svg, "J by setting");
    if (files->bars_svg) put_image(f, dir, files->bars_svg, "J per run");
    fputs("</div>\n", f);
    for (int g = 0; g < sm->ngroups && s == MLC_OK; g++) {
        const mlc_summary_group *G = &sm->groups[g];
        fprintf(f, "<h2 id=\"group-%d\">Group %d: ", g + 1, g + 1);
        mlc_xml_escape(f, G->label);
        fprintf(f, "</h2>\n<p>n %d (%d done) &#183; J median ", G->n, G->done);
        static const char *const words[6] = {
            ", min ", ", max ", " &#183; credible ", " &#183; robust ", " &#183; full-space kept ",
            "</p>\n"};
        put_stats(f, G, words);
        for (int i = 0; i < sm->nruns && s == MLC_OK; i++)
            if (sm->runs[i].group == g) s = run_block(f, dir, &sm->runs[i], info, err);
    }
    fputs("</body></html>\n", f);
    if (s != MLC_OK) {
        mlc_afile_abort(&af);
        return s;
    }
    return mlc_afile_commit(&af, err);
}
