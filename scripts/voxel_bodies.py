#!/usr/bin/env python3
"""voxel_bodies.py NAME OUT.mesh [--refine R]: write a voxel creature as a Medit tet mesh.

Bodies of other shapes than the bundled ones, to check the defaults on characters they were not
chosen on (scripts/bench_zoo.sh, ZOO_BODIES="elephant seal starfish couch scorpion"). Each is a
set of unit voxels (y up, +x forward), every voxel cut into the six tets of its Kuhn
subdivision, so neighbouring voxels share faces and the mesh is conforming; vertices are
scaled by 0.05 (modalloco normalizes the extent anyway). --refine R cuts every voxel into R^3
(the same shape, R^3 times the tets: R = 2 gives bodies of the paper's Table 1 sizes).

  elephant  a raised torso on four thick legs, a head with ears and a hanging trunk (10.8k tets)
  seal      a long body lying on its belly, a raised head, fore and tail flippers (7.1k tets)
  starfish  a flat body with five arms lying on the ground (3.2k tets)
  couch     a seat on four short legs with a backrest and two arms (6.0k tets)
  scorpion  a flat body on eight thin legs, two claws and a tail curled over it (2.8k tets)
  dog       a long body high on four thin legs, a neck and head, a tail one voxel thick
  frog      a low body with folded hind legs and long toes one voxel thick spread on the ground
  leaning   a stick 12 voxels high leaning along +x, one voxel over every three up, each step
            bridged by a second voxel so the parts share faces: its centre of mass lies beside
            its one-voxel foot and it topples when left alone (tests/cli_stand.sh; 90 tets)
"""
import math
import sys


def box(voxels, x0, x1, y0, y1, z0, z1):
    for x in range(x0, x1):
        for y in range(y0, y1):
            for z in range(z0, z1):
                voxels.add((x, y, z))


def elephant():
    v = set()
    box(v, 0, 16, 7, 15, 0, 9)  # torso
    for x, z in ((1, 0), (11, 0), (1, 6), (11, 6)):
        box(v, x, x + 4, 0, 7, z, z + 3)  # legs
    box(v, 16, 21, 9, 16, 2, 7)  # head
    box(v, 19, 21, 2, 9, 3, 6)  # trunk
    box(v, 16, 18, 10, 16, -2, 2)  # ears
    box(v, 16, 18, 10, 16, 7, 11)
    return v


def seal():
    v = set()
    box(v, 0, 26, 0, 5, 0, 7)  # body on its belly
    box(v, 26, 31, 2, 7, 1, 6)  # head
    box(v, 16, 20, 0, 2, -4, 0)  # fore flippers
    box(v, 16, 20, 0, 2, 7, 11)
    box(v, -5, 0, 0, 2, -1, 3)  # tail flippers
    box(v, -5, 0, 0, 2, 4, 8)
    return v


def starfish():
    v = set()
    box(v, -4, 5, 0, 3, -4, 5)  # central disc
    for arm in range(5):
        a = 2 * math.pi * arm / 5
        for r in range(4, 15):
            cx, cz = r * math.cos(a), r * math.sin(a)
            half = 3 if r < 10 else 2  # arms taper
            for dx in range(-half, half + 1):
                for dz in range(-half, half + 1):
                    if dx * dx + dz * dz <= half * half:
                        x, z = int(round(cx + dx * 0.5)), int(round(cz + dz * 0.5))
                        v.add((x, 0, z))
                        if r < 11:
                            v.add((x, 1, z))
    return v


def couch():
    v = set()
    box(v, 0, 20, 2, 5, 0, 9)  # seat
    box(v, 0, 20, 5, 13, 0, 2)  # backrest
    box(v, 0, 2, 5, 9, 2, 9)  # arms
    box(v, 18, 20, 5, 9, 2, 9)
    for x, z in ((0, 0), (18, 0), (0, 7), (18, 7)):
        box(v, x, x + 2, 0, 2, z, z + 2)  # legs
    return v


def scorpion():
    v = set()
    box(v, 0, 14, 3, 6, 0, 7)  # body, raised on its legs
    for i in range(4):
        x = 2 + 3 * i
        box(v, x, x + 1, 3, 4, -4, 0)  # left leg: out, then down
        box(v, x, x + 1, 0, 4, -5, -4)
        box(v, x, x + 1, 3, 4, 7, 11)  # right leg
        box(v, x, x + 1, 0, 4, 11, 12)
    box(v, 14, 19, 4, 6, 0, 2)  # claws
    box(v, 14, 19, 4, 6, 5, 7)
    for x, y in ((-1, 5), (-2, 6), (-3, 7), (-4, 8), (-4, 9), (-3, 10), (-2, 11), (-1, 11)):
        box(v, x, x + 2, y, y + 2, 2, 5)  # tail, curling up and over
    return v


def dog():
    v = set()
    box(v, 0, 18, 6, 11, 0, 7)  # body
    for x, z in ((1, 0), (1, 5), (15, 0), (15, 5)):
        box(v, x, x + 2, 0, 6, z, z + 2)  # thin legs
    box(v, 17, 20, 9, 14, 2, 5)  # neck
    box(v, 18, 24, 12, 16, 1, 6)  # head
    box(v, -5, 0, 9, 10, 3, 4)  # tail, one voxel thick
    return v


def frog():
    v = set()
    box(v, 0, 12, 1, 5, 0, 9)  # body, low over the ground
    box(v, 12, 16, 1, 5, 1, 8)  # head
    for z0, z1, toes, f0, f1 in ((-4, 0, (-4, -2), -3, 0), (9, 13, (10, 12), 9, 12)):
        box(v, -3, 2, 0, 2, z0, z1)  # folded hind leg
        for zt in toes:
            box(v, -8, -3, 0, 1, zt, zt + 1)  # long toes, one voxel thick
        box(v, 9, 11, 0, 2, f0, f1)  # fore leg
        for zt in (f0, f1 - 1):
            box(v, 11, 14, 0, 1, zt, zt + 1)  # fore toes
    return v


def leaning():
    v = {(k // 3, k, 0) for k in range(12)}
    v |= {(k // 3 - 1, k, 0) for k in (3, 6, 9)}  # bridges: each step shares a face
    return v


BODIES = {"elephant": elephant, "seal": seal, "starfish": starfish, "couch": couch,
          "scorpion": scorpion, "dog": dog, "frog": frog, "leaning": leaning}

# The six tets of a unit cube: one per order in which the path from corner (0,0,0) to (1,1,1)
# steps along the axes.
AXIS_ORDERS = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]


def signed_volume6(a, b, c, d):
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    w = [d[i] - a[i] for i in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0]))


def write_mesh(voxels, path, spacing=0.05):
    index, points, tets = {}, [], []

    def vertex(p):
        if p not in index:
            index[p] = len(points) + 1  # Medit numbers from 1
            points.append(p)
        return index[p]

    for corner in sorted(voxels):
        for order in AXIS_ORDERS:
            walk, cur = [corner], list(corner)
            for axis in order:
                cur[axis] += 1
                walk.append(tuple(cur))
            if signed_volume6(*walk) < 0:
                walk[2], walk[3] = walk[3], walk[2]
            tets.append([vertex(p) for p in walk])
    with open(path, "w") as f:
        f.write("MeshVersionFormatted 2\nDimension 3\n\nVertices\n%d\n" % len(points))
        for x, y, z in points:
            f.write("%g %g %g 0\n" % (x * spacing, y * spacing, z * spacing))
        f.write("\nTetrahedra\n%d\n" % len(tets))
        for t in tets:
            f.write("%d %d %d %d 0\n" % tuple(t))
        f.write("\nEnd\n")
    return len(points), len(tets)


def refined(voxels, r):
    """The same shape with every voxel cut into r x r x r: r^3 times the tets, at the paper's
    sizes for r = 2 (22k-86k tets)."""
    return {(r * x + i, r * y + j, r * z + k) for x, y, z in voxels
            for i in range(r) for j in range(r) for k in range(r)}


def main():
    args = sys.argv[1:]
    r = 1
    if len(args) == 4 and args[2] == "--refine" and args[3].isdigit() and int(args[3]) >= 1:
        r = int(args[3])
        args = args[:2]
    if len(args) != 2 or args[0] not in BODIES:
        sys.exit("usage: voxel_bodies.py {%s} OUT.mesh [--refine R]" % ",".join(BODIES))
    nv, nt = write_mesh(refined(BODIES[args[0]](), r), args[1], 0.05 / r)
    print("%s: %d vertices, %d tets -> %s" % (args[0], nv, nt, args[1]))


if __name__ == "__main__":
    main()
