/* fuzz_mesh_tetgen.c: libFuzzer target for the TetGen .node/.ele reader (through
 * mlc_mesh_read). One input holds both files: the bytes before the first line "#ELE" go to
 * in.node, the rest to in.ele ('#' starts a TetGen comment, so the marker is harmless if the
 * fuzzer moves it); without the marker the .ele is empty. */
#include "fuzz_util.h"
#include "mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char mark[] = "\n#ELE\n";
    size_t split = size, skip = 0;
    for (size_t i = 0; i + sizeof mark - 1 <= size; i++)
        if (memcmp(data + i, mark, sizeof mark - 1) == 0) {
            split = i + 1;
            skip = sizeof mark - 2;
            break;
        }
    const char *node = fuzz_write("in.node", data, split);
    fuzz_write("in.ele", data + split + skip, size - split - skip);
    long live = mlc_alloc_live();
    mlc_mesh m = {0};
    mlc_err err = {0};
    mlc_status st = mlc_mesh_read(node, &m, NULL, &err);
    fuzz_check_msg(st, &err, "tetgen");
    if (st != MLC_OK && st != MLC_EPARSE && st != MLC_EINVAL) {
        fprintf(stderr, "unexpected status %d: %s\n", (int)st, err.msg);
        abort();
    }
    mlc_mesh_free(&m);
    fuzz_check_live(live, "tetgen");
    return 0;
}
