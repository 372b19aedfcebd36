/* fuzz_util.h: shared plumbing of the libFuzzer targets in tests/fuzz/.
 *
 * The readers under test take file paths (that is how users reach them), so each input is
 * written to a file in one private directory made once per process with mkdtemp and removed
 * at exit. Surfaces are never handed to tetgen: MLC_TETGEN names a program that does not
 * exist, so a surface that parses ends in MLC_ETOOL at once and the fuzzer stays on our
 * parser (tetgen's own robustness is not ours to test, and a fork per input is slow).
 * Every target also checks that a failed read frees everything it allocated.
 */
#ifndef MLC_FUZZ_UTIL_H
#define MLC_FUZZ_UTIL_H

#include "base.h"
#include "base_testing.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fuzz_dir[4096];

static void fuzz_cleanup(void) {
    char cmd_path[4200];
    if (!fuzz_dir[0]) return;
    /* Remove whatever names the targets used (each target uses a handful of fixed names). */
    static const char *const names[] = {"in.mesh", "in.node",  "in.ele", "in.msh",
                                        "in.off",  "in.obj",   "in.stl", "in.ply",
                                        "in.json", "in.cache", "in.bin"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(cmd_path, sizeof cmd_path, "%s/%s", fuzz_dir, names[i]);
        unlink(cmd_path);
    }
    rmdir(fuzz_dir);
}

/* Create the private directory and pin down the environment; called once. */
static void fuzz_init(void) {
    if (fuzz_dir[0]) return;
    const char *tmp = getenv("TMPDIR");
    snprintf(fuzz_dir, sizeof fuzz_dir, "%s/mlc-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(fuzz_dir)) {
        perror("mkdtemp");
        abort();
    }
    atexit(fuzz_cleanup);
    setenv("MLC_TETGEN", "/nonexistent/modalloco-fuzz/tetgen", 1);
}

/* Write data to fuzz_dir/name and return the path (static buffer, valid until the next call). */
static const char *fuzz_write(const char *name, const uint8_t *data, size_t size) {
    static char path[2][4200];
    static int which;
    char *p = path[which ^= 1];
    fuzz_init();
    snprintf(p, sizeof path[0], "%s/%s", fuzz_dir, name);
    FILE *f = fopen(p, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(p);
        abort();
    }
    return p;
}

/* Every reader must free what it allocated when it fails (and its result when freed). */
static void fuzz_check_live(long before, const char *what) {
    long now = mlc_alloc_live();
    if (now != before) {
        fprintf(stderr, "%s: %ld blocks leaked through mlc_malloc\n", what, now - before);
        abort();
    }
}

/* A read error must come with a message (the user is told what is wrong). */
static void fuzz_check_msg(mlc_status st, const mlc_err *err, const char *what) {
    if (st != MLC_OK && (err->code != st || !err->msg[0])) {
        fprintf(stderr, "%s: status %d without a matching message (code %d, '%s')\n", what, (int)st,
                (int)err->code, err->msg);
        abort();
    }
}

#endif
