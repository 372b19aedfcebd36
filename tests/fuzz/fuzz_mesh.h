/* fuzz_mesh.h: the body of every fuzz_mesh_<format>.c target: write the input with the
 * format's extension and read it with mlc_mesh_read, the entry point users reach. The
 * including file defines FUZZ_MESH_FILE ("in.off", ...). Statuses other than OK, EPARSE,
 * EINVAL, ENOMEM and ETOOL (surfaces: tetgen is disabled) are bugs, as are leaks. */
#ifndef MLC_FUZZ_MESH_H
#define MLC_FUZZ_MESH_H

#include "fuzz_util.h"
#include "mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_write(FUZZ_MESH_FILE, data, size);
    long live = mlc_alloc_live();
    mlc_mesh m = {0};
    mlc_mesh_report rep;
    mlc_err err = {0};
    mlc_status st = mlc_mesh_read(path, &m, &rep, &err);
    fuzz_check_msg(st, &err, FUZZ_MESH_FILE);
    if (st != MLC_OK && st != MLC_EPARSE && st != MLC_EINVAL && st != MLC_ETOOL) {
        fprintf(stderr, "unexpected status %d: %s\n", (int)st, err.msg);
        abort();
    }
    if (st == MLC_OK) {
        /* A mesh that passed validation must be usable as promised in mesh.h. */
        if (m.nv < 4 || m.nt < 1 || m.nf < 4 || !m.X || !m.T || !m.F) abort();
        for (int i = 0; i < 4 * m.nt; i++)
            if (m.T[i] < 0 || m.T[i] >= m.nv) abort();
        for (int i = 0; i < 3 * m.nf; i++)
            if (m.F[i] < 0 || m.F[i] >= m.nv) abort();
        mlc_mesh_stats stats;
        mlc_mesh_compute_stats(&m, &stats);
    }
    mlc_mesh_free(&m);
    fuzz_check_live(live, FUZZ_MESH_FILE);
    return 0;
}

#endif
