#!/usr/bin/env bash
# cli_stand.sh BIN SRCDIR: before its search, optimize rolls the body out once with no
# actuation and says when it falls over left alone (a credible gait must then balance by
# actuating, which a finer model seldom reproduces). A leaning stick of voxels topples and
# draws the note; the bundled quadruped stands and does not; the passive rollout leaves the
# search's bits alone (params.json equal with and without --quiet, which skips the note).
. "$(dirname "$0")/lib_cli.sh" "$@"
SMALL=(--set cmaes.population=6 --set cmaes.generations=2 --set actuation.modes=3 --threads 1)

# A stick of voxels 12 high leaning along +x (one voxel over every three up, each step bridged
# by a second voxel so the body is face-connected): its centre of mass lies beside its one-voxel
# foot, and it comes to rest on its side, up_min about 0.3. Each voxel is six tets around its
# main diagonal (a conforming split), each ordered to positive volume.
python3 - "$T/leaning.mesh" <<'PY'
import sys
h = 0.1
vox = [(k // 3, k, 0) for k in range(12)] + [(k // 3 - 1, k, 0) for k in (3, 6, 9)]
ids, verts, tets = {}, [], []
def vid(p):
    if p not in ids:
        ids[p] = len(verts) + 1
        verts.append(p)
    return ids[p]
def vol(a, b, c, d):
    u = [b[i] - a[i] for i in range(3)]; v = [c[i] - a[i] for i in range(3)]; w = [d[i] - a[i] for i in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0]))
perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
for (x, y, z) in vox:
    for p in perms:
        path = [(x, y, z)]
        cur = [x, y, z]
        for a in p:
            cur[a] += 1
            path.append(tuple(cur))
        if vol(*path) < 0:
            path[2], path[3] = path[3], path[2]
        tets.append([vid(q) for q in path])
with open(sys.argv[1], "w") as f:
    f.write("MeshVersionFormatted 2\nDimension 3\n\nVertices\n%d\n" % len(verts))
    for (x, y, z) in verts:
        f.write("%g %g %g 0\n" % (x * h, y * h, z * h))
    f.write("\nTetrahedra\n%d\n" % len(tets))
    for t in tets:
        f.write("%d %d %d %d 0\n" % tuple(t))
    f.write("\nEnd\n")
PY

opt_ok "$BIN" optimize "$T/leaning.mesh" "${SMALL[@]}" --out "$T/lean" >"$T/out" 2>"$T/err" \
  && ok "optimize on the leaning body" || fail "optimize on the leaning body: $(cat "$T/err")"
grep -q "left alone, this body falls over" "$T/err" && ok "the leaning body draws the note" \
  || fail "no note for the leaning body: $(grep -v '^gen ' "$T/err")"
opt_ok "$BIN" optimize "$SRC/data/quadruped.mesh" "${SMALL[@]}" --out "$T/quad" >/dev/null \
  2>"$T/err" && ok "optimize on the quadruped" || fail "optimize on the quadruped: $(cat "$T/err")"
grep -q "falls over" "$T/err" && fail "the quadruped stands, yet drew the note" \
  || ok "no note for the quadruped"
opt_ok "$BIN" optimize "$T/leaning.mesh" "${SMALL[@]}" --quiet --out "$T/lean_quiet" \
  >/dev/null 2>&1 || fail "optimize --quiet on the leaning body"
cmp -s "$T/lean/params.json" <(sed "s#$T/lean_quiet#$T/lean#" "$T/lean_quiet/params.json") \
  && ok "the passive rollout leaves the search's bits alone" \
  || fail "params.json differs with the passive rollout"
finish
