#!/bin/bash
# cli_vtk.sh: output.vtk. The ParaView series is read back with VTK's own XML readers (python3
# with python3-vtk9; the .pvd itself with Python's XML parser, since the PVD reader is
# ParaView's, not VTK's): every collection entry names a file that exists, frame k has the
# points of animation.pc2's frame k exactly and the triangles of surface.obj, the tet mesh has
# every vertex and cell type 10, its boundary vertices move with the surface, the times follow
# trajectory.csv, values are finite and the readers report no error. Without python3-vtk9 the
# reader checks are skipped and only the files and the I/O error are checked.
. "$(dirname "$0")/lib_cli.sh" "$@"
MESH=$SRC/data/quadruped.mesh

PY=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c 'import vtkmodules.vtkIOXML' 2>/dev/null; then
    PY=$p; break
  fi
done

check "simulate with output.vtk and output.vtk_volume" 0 "$BIN" simulate "$MESH" \
  --set sim.steps=24 --set output.every=5 --set output.vtk=true --set output.vtk_volume=true \
  --out "$T/s" --quiet
n=$(ls "$T/s/frames" | grep -c '^frame_[0-9]*\.vtp$')
[ "$n" -eq 5 ] && ok "5 surface frames for 24 steps, every 5th" || fail "$n surface frames"
[ -s "$T/s/frames.pvd" ] && [ -s "$T/s/volume.pvd" ] && ok "frames.pvd and volume.pvd" ||
  fail "collections missing"

readback() { # DIR MESH WITH_VOLUME
  "$PY" - "$@" <<'EOF'
import math, os, struct, sys, xml.etree.ElementTree as ET
from vtkmodules.vtkCommonCore import vtkFileOutputWindow, vtkOutputWindow
from vtkmodules.vtkIOXML import vtkXMLPolyDataReader, vtkXMLUnstructuredGridReader
d, mesh, with_volume = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
log = os.path.join(d, "vtk-errors.log")
w = vtkFileOutputWindow(); w.SetFileName(log); vtkOutputWindow.SetInstance(w)
bad = []
def need(cond, what):
    if not cond: bad.append(what)

raw = open(os.path.join(d, "animation.pc2"), "rb").read()
_, _, npts, _, _, nsamp = struct.unpack("<12siiffi", raw[:32])
pc2 = struct.unpack("<%df" % (3 * npts * nsamp), raw[32:])
faces = [tuple(int(t) - 1 for t in l.split()[1:]) for l in open(os.path.join(d, "surface.obj"))
         if l.startswith("f ")]
rest = [tuple(float(t) for t in l.split()[1:]) for l in open(os.path.join(d, "surface.obj"))
        if l.startswith("v ")]
rows = [l.split(",") for l in open(os.path.join(d, "trajectory.csv")).read().split("\n")[1:] if l]
every = 5
times = [float(r[1]) for r in rows if int(r[0]) % every == 0]

def collection(name):
    root = ET.parse(os.path.join(d, name)).getroot()
    need(root.tag == "VTKFile" and root.get("type") == "Collection", name + ": root")
    sets = root.find("Collection").findall("DataSet")
    return [(float(s.get("timestep")), s.get("file")) for s in sets]

def finite(arr):
    return all(math.isfinite(v) for i in range(arr.GetNumberOfTuples()) for v in arr.GetTuple(i))

surf = collection("frames.pvd")
need(len(surf) == nsamp, "frames.pvd has %d entries, animation.pc2 %d" % (len(surf), nsamp))
need(len(times) == nsamp, "trajectory.csv gives %d output frames" % len(times))
for k, (t, f) in enumerate(surf):
    need(abs(t - times[k]) <= 1e-9, "frame %d time %g, trajectory %g" % (k, t, times[k]))
    need(f == "frames/frame_%04d.vtp" % k, "frame %d file %s" % (k, f))
    r = vtkXMLPolyDataReader(); r.SetFileName(os.path.join(d, f)); r.Update()
    pd = r.GetOutput()
    need(pd.GetNumberOfPoints() == npts, "%s: %d points" % (f, pd.GetNumberOfPoints()))
    need(pd.GetNumberOfPolys() == len(faces), "%s: %d polys" % (f, pd.GetNumberOfPolys()))
    if pd.GetNumberOfPoints() != npts: continue
    for i in range(npts):
        p = pd.GetPoint(i)
        if any(p[c] != pc2[3 * (k * npts + i) + c] for c in range(3)):
            bad.append("%s: point %d %s differs from animation.pc2" % (f, i, p)); break
    polys = pd.GetPolys()
    ids = polys.GetConnectivityArray(); offs = polys.GetOffsetsArray()
    got = [tuple(int(ids.GetTuple1(j)) for j in range(int(offs.GetTuple1(c)),
                 int(offs.GetTuple1(c + 1)))) for c in range(pd.GetNumberOfPolys())]
    need(got == faces, "%s: triangles differ from surface.obj" % f)
    disp = pd.GetPointData().GetArray("displacement")
    flag = pd.GetPointData().GetArray("contact_sample")
    need(disp is not None and disp.GetNumberOfComponents() == 3 and finite(disp),
         f + ": displacement")
    need(flag is not None and 1 <= sum(flag.GetTuple1(i) for i in range(npts)) <= npts,
         f + ": contact_sample flags")
    if disp is not None:
        err = max(abs(pd.GetPoint(i)[c] - rest[i][c] - disp.GetTuple3(i)[c])
                  for i in range(npts) for c in range(3))
        need(err < 1e-5, "%s: displacement off by %g" % (f, err))
    need(finite(pd.GetPoints().GetData()), f + ": non-finite points")

if with_volume:
    # The mesh's vertices and tets, and its boundary vertices (faces of one tet), ascending:
    # the surface's compacted order.
    lines = open(mesh).read().split("\n")
    def block(name, width):
        i = next(j for j, l in enumerate(lines) if l.strip() == name)
        n = int(lines[i + 1])
        return [[float(t) for t in lines[i + 2 + j].split()[:width]] for j in range(n)]
    nv = len(block("Vertices", 3))
    tets = [[int(v) - 1 for v in t] for t in block("Tetrahedra", 4)]
    count = {}
    for t in tets:
        for a, b, c in ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)):
            key = tuple(sorted((t[a], t[b], t[c]))); count[key] = count.get(key, 0) + 1
    boundary = sorted({v for f, c in count.items() if c == 1 for v in f})
    need(len(boundary) == npts, "boundary %d vertices, surface %d" % (len(boundary), npts))
    vol = collection("volume.pvd")
    need([t for t, _ in vol] == [t for t, _ in surf], "volume.pvd times differ")
    for k, (t, f) in enumerate(vol):
        r = vtkXMLUnstructuredGridReader(); r.SetFileName(os.path.join(d, f)); r.Update()
        ug = r.GetOutput()
        need(ug.GetNumberOfPoints() == nv, "%s: %d points, mesh %d" % (f, ug.GetNumberOfPoints(), nv))
        need(ug.GetNumberOfCells() == len(tets), "%s: %d cells" % (f, ug.GetNumberOfCells()))
        need(all(ug.GetCellType(c) == 10 for c in range(ug.GetNumberOfCells())), f + ": cell type")
        need(finite(ug.GetPoints().GetData()), f + ": non-finite points")
        need(ug.GetPointData().GetArray("displacement") is not None, f + ": displacement")
        if ug.GetNumberOfPoints() != nv or len(boundary) != npts: continue
        err = max(abs(ug.GetPoint(v)[c] - pc2[3 * (k * npts + i) + c])
                  for i, v in enumerate(boundary) for c in range(3))
        need(err < 1e-6, "%s: boundary vertices off the surface frame by %g" % (f, err))
        cell = ug.GetCell(0)
        need([cell.GetPointId(j) for j in range(4)] == tets[0], f + ": first tet")

if os.path.exists(log) and open(log).read().strip():
    bad.append("VTK reported: " + open(log).read().strip()[:300])
for b in bad: print("  " + b)
print("read back %d frames%s" % (len(surf), " with volume" if with_volume else ""))
sys.exit(1 if bad else 0)
EOF
}

if [ -n "$PY" ]; then
  readback "$T/s" "$MESH" 1 && ok "VTK's readers read the series back" ||
    fail "series read back wrong"
else
  echo "SKIP: python3-vtk9 not installed (VTK reader checks)"
fi

# A shorter run in the same directory without the volume leaves no stale frames behind.
check "rerun, fewer steps, no volume" 0 "$BIN" simulate "$MESH" --set sim.steps=9 \
  --set output.every=5 --set output.vtk=true --out "$T/s" --quiet --force
[ "$(ls "$T/s/frames")" = "$(printf 'frame_0000.vtp\nframe_0001.vtp')" ] &&
  [ ! -e "$T/s/volume.pvd" ] && ok "stale frames removed" || fail "frames: $(ls "$T/s/frames")"
grep -c '<DataSet ' "$T/s/frames.pvd" | grep -qx 2 && ok "2 entries" || fail "frames.pvd entries"

check "optimize with output.vtk" 0 opt_ok "$BIN" optimize "$MESH" --set cmaes.generations=1 \
  --set cmaes.population=4 --set sim.steps=10 --set output.every=5 --set output.vtk=true \
  --out "$T/o" --quiet
[ -s "$T/o/frames.pvd" ] && [ -s "$T/o/frames/frame_0002.vtp" ] && ok "optimize wrote the series" ||
  fail "optimize series missing"
if [ -n "$PY" ]; then
  readback "$T/o" "$MESH" 0 && ok "optimize's series reads back" || fail "optimize's series"
fi

# A file where the frames directory belongs: an I/O error, exit 1, and no collection.
mkdir -p "$T/bad" && : >"$T/bad/frames"
check "frames is a file" 1 "$BIN" simulate "$MESH" --set sim.steps=5 --set output.vtk=true \
  --out "$T/bad" --quiet
grep_err "the error names the directory" "frames"
[ ! -e "$T/bad/frames.pvd" ] && ok "no collection after the error" || fail "frames.pvd written"
finish
