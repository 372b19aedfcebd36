(function () {
'use strict';
function $(id) { return document.getElementById(id); }
var notesEl = $('notes'), overlay = $('overlay');
function note(t) { var li = document.createElement('li'); li.textContent = t; notesEl.appendChild(li); }
function parseTag(id) {
  var e = $(id);
  if (!e) return null;
  try { return JSON.parse(e.textContent); } catch (x) { note('The embedded ' + id + '.json could not be parsed.'); return null; }
}
var M = parseTag('meta'), config = parseTag('config'), params = parseTag('params'), result = parseTag('result');
(M.notes || []).forEach(note);
$('subtitle').textContent = M.dir;

/* ---- Key numbers ---- */
function get(o, path) {
  var parts = path.split('.');
  for (var i = 0; i < parts.length; i++) { if (o === null || typeof o !== 'object') return undefined; o = o[parts[i]]; }
  return o;
}
function fmt(v) {
  if (typeof v === 'number') return Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 1e-3) ? v.toExponential(4) : String(+v.toPrecision(6));
  if (Array.isArray(v)) return '[' + v.map(fmt).join(', ') + ']';
  if (v === null) return 'null';
  return String(v);
}
(function () {
  var tbl = $('numbers'), res = result || params;
  function row(label, v) {
    if (v === undefined || v === '') return;
    var tr = document.createElement('tr'), a = document.createElement('td'), b = document.createElement('td');
    a.textContent = label; b.textContent = fmt(v); tr.appendChild(a); tr.appendChild(b); tbl.appendChild(tr);
  }
  row('J', get(res, 'J'));
  row('displacement (m)', get(res, 'displacement'));
  row('J_disp', get(res, 'J_disp'));
  row('J_align', get(res, 'J_align'));
  row('J_work', get(res, 'J_work'));
  row('generations', get(params, 'generations'));
  row('evaluations', get(params, 'evaluations'));
  row('stop reason', get(params, 'stop_reason'));
  row('mesh', get(params, 'mesh.path') || (config ? get(config, 'mesh.path') || '(sample mesh)' : undefined));
  row('mesh vertices / tets', params && params.mesh ? params.mesh.vertices + ' / ' + params.mesh.tets : undefined);
  row('surface vertices / triangles', M.nv + ' / ' + M.nf);
  row('steps x dt (s)', config ? get(config, 'sim.steps') + ' x ' + get(config, 'sim.dt') : undefined);
  row('actuation modes x sinusoids', config ? get(config, 'actuation.modes') + ' x ' + get(config, 'actuation.sinusoids') : undefined);
  row('objective', config ? get(config, 'objective.kind') + ' along ' + fmt(get(config, 'objective.direction')) : undefined);
  var T = M.task, kind = get(config, 'objective.kind');
  if (T && T.kind === 'path') row('task', 'follow ' + (get(config, 'objective.path') || 'the waypoints') + ' (' + T.npath + ' waypoints)');
  else if (T && T.target) row('task', 'reach ' + fmt(T.target));
  else if (T && T.heading) row('task', 'face ' + fmt([T.heading[0], T.heading[2]]) + ' (x, z)');
  if (kind !== undefined && kind !== 'locomotion') {
    row('J_task', get(res, 'J_task'));
    row('task_error (' + (M.taskErrorUnit || 'extents') + ')', get(res, 'task_error'));
  }
  if (T && T.finalDist !== undefined) row('final distance to target (m)', T.finalDist);
  if (T && T.heading && T.forward1) {
    var a = Math.atan2(T.forward1[2], T.forward1[0]) - Math.atan2(T.heading[2], T.heading[0]);
    a = Math.atan2(Math.sin(a), Math.cos(a));
    row('final heading error (deg)', Math.abs(a) * 180 / Math.PI);
  }
  row('terrain', M.terrain ? M.terrain.desc : (config ? 'flat ground at y = ' + fmt(M.ground) : undefined));
  row('CMA-ES population', get(config, 'cmaes.population'));
  row('CMA-ES generations', get(config, 'cmaes.generations'));
  row('CMA-ES sigma0', get(config, 'cmaes.sigma0'));
  row('seed', get(config, 'cmaes.seed'));
  row('frames (shown / written)', M.frames + ' / ' + M.framesTotal);
})();

/* ---- Convergence plot (inline SVG) ---- */
(function () {
  var h = M.hist, el = $('plot');
  if (!h || !h.length) { el.textContent = 'No history.csv in this directory (simulate writes none; optimize does).'; return; }
  var W = 420, H = 240, L = 62, R = 10, T = 24, B = 34, lo = Infinity, hi = -Infinity;
  h.forEach(function (r) { for (var k = 1; k < 3; k++) if (isFinite(r[k])) { lo = Math.min(lo, r[k]); hi = Math.max(hi, r[k]); } });
  if (!(lo <= hi)) { el.textContent = 'history.csv holds no finite values.'; return; }
  if (hi - lo < 1e-12) { lo -= 0.5; hi += 0.5; }
  var pad = 0.05 * (hi - lo); lo -= pad; hi += pad;
  var g0 = h[0][0], g1 = h[h.length - 1][0]; if (g1 === g0) { g0 -= 0.5; g1 += 0.5; }
  function X(g) { return L + (W - L - R) * (g - g0) / (g1 - g0); }
  function Y(v) { return T + (H - T - B) * (hi - v) / (hi - lo); }
  function line(k) {
    return h.filter(function (r) { return isFinite(r[k]); }).map(function (r) { return X(r[0]).toFixed(1) + ',' + Y(r[k]).toFixed(1); }).join(' ');
  }
  var s = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ' + W + ' ' + H + '">';
  s += '<rect x="' + L + '" y="' + T + '" width="' + (W - L - R) + '" height="' + (H - T - B) + '" fill="none" stroke="#99a"/>';
  for (var i = 0; i <= 4; i++) {
    var v = lo + (hi - lo) * i / 4, y = Y(v);
    s += '<line x1="' + L + '" x2="' + (W - R) + '" y1="' + y.toFixed(1) + '" y2="' + y.toFixed(1) + '" stroke="#e3e5ea"/>';
    s += '<text x="' + (L - 4) + '" y="' + (y + 4).toFixed(1) + '" font-size="11" text-anchor="end">' + (+v.toPrecision(3)) + '</text>';
  }
  s += '<text x="' + L + '" y="' + (H - 18) + '" font-size="11">' + g0 + '</text>';
  s += '<text x="' + (W - R) + '" y="' + (H - 18) + '" font-size="11" text-anchor="end">' + g1 + '</text>';
  s += '<text x="' + ((L + W - R) / 2) + '" y="' + (H - 4) + '" font-size="12" text-anchor="middle">generation</text>';
  s += '<polyline fill="none" stroke="#d9480f" stroke-width="2" points="' + line(1) + '"/>';
  s += '<polyline fill="none" stroke="#1c7ed6" stroke-width="1.5" stroke-dasharray="4 3" points="' + line(2) + '"/>';
  s += '<text x="' + L + '" y="16" font-size="12" fill="#d9480f">best J</text>';
  s += '<text x="' + (L + 60) + '" y="16" font-size="12" fill="#1c7ed6">median J</text>';
  s += '<text x="' + (W - R) + '" y="16" font-size="12" text-anchor="end">(lower is better)</text></svg>';
  el.innerHTML = s;
})();

/* ---- Embedded binary data: base64 split over several script elements ---- */
function decode(cls, total, done) {
  var parts = document.querySelectorAll('script.' + cls), out = new Uint8Array(total), off = 0, i = 0;
  function step() {
    var t0 = Date.now();
    while (i < parts.length && Date.now() - t0 < 40) {
      var s = atob(parts[i].textContent.trim());
      for (var k = 0; k < s.length; k++) out[off + k] = s.charCodeAt(k);
      off += s.length; i++;
    }
    overlay.textContent = 'loading ' + cls.replace('mlc-', '') + ' ' + Math.round(100 * off / Math.max(total, 1)) + '%';
    if (i < parts.length) setTimeout(step, 0);
    else if (off !== total) { overlay.textContent = 'embedded data is damaged (' + off + ' of ' + total + ' bytes)'; }
    else done(out);
  }
  step();
}

/* ---- Small vector and matrix helpers (column-major 4x4) ---- */
function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
function norm(a) { var n = Math.sqrt(dot(a, a)) || 1; return [a[0] / n, a[1] / n, a[2] / n]; }
function perspective(fovy, aspect, n, f) {
  var t = 1 / Math.tan(fovy / 2), m = new Float32Array(16);
  m[0] = t / aspect; m[5] = t; m[10] = (f + n) / (n - f); m[11] = -1; m[14] = 2 * f * n / (n - f);
  return m;
}
function lookAt(e, c, u) {
  var z = norm(sub(e, c)), x = norm(cross(u, z)), y = cross(z, x), m = new Float32Array(16);
  m[0] = x[0]; m[4] = x[1]; m[8] = x[2]; m[12] = -dot(x, e);
  m[1] = y[0]; m[5] = y[1]; m[9] = y[2]; m[13] = -dot(y, e);
  m[2] = z[0]; m[6] = z[1]; m[10] = z[2]; m[14] = -dot(z, e); m[15] = 1;
  return {m: m, x: x, y: y, z: z};
}
function mul(a, b) {
  var o = new Float32Array(16);
  for (var i = 0; i < 4; i++) for (var j = 0; j < 4; j++) {
    var s = 0;
    for (var k = 0; k < 4; k++) s += a[k * 4 + j] * b[i * 4 + k];
    o[i * 4 + j] = s;
  }
  return o;
}

/* ---- Scene ---- */
var nv = M.nv, nf = M.nf, F = M.frames, faces = null, pos = null;
var every = Math.max(1, M.trajPerFrame), traj = M.traj, ground = M.ground;
var lo = M.lo, hi = M.hi, lo0 = M.lo0, hi0 = M.hi0;
var radius0 = 0.5 * Math.sqrt(dot(sub(hi0, lo0), sub(hi0, lo0))) || 1;
var cam = {yaw: 0.55, pitch: 0.38, dist: 1, follow: true};
var state = {frame: 0, playing: true, speed: 1, t: 0, dirty: true};
var fovy = 40 * Math.PI / 180;
function resetView() { cam.yaw = 0.55; cam.pitch = 0.38; cam.dist = 1.5 * radius0 / Math.sin(fovy / 2); state.dirty = true; }
resetView();
function comAt(f) {
  var r = Math.min(f * every, traj.length / 3 - 1);
  return r >= 0 ? [traj[3 * r], traj[3 * r + 1], traj[3 * r + 2]] : [(lo0[0] + hi0[0]) / 2, (lo0[1] + hi0[1]) / 2, (lo0[2] + hi0[2]) / 2];
}
function camera(w, h) {
  var tg = cam.follow ? comAt(state.frame) : [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2];
  var cp = Math.cos(cam.pitch), e = [tg[0] + cam.dist * cp * Math.sin(cam.yaw), tg[1] + cam.dist * Math.sin(cam.pitch), tg[2] + cam.dist * cp * Math.cos(cam.yaw)];
  var v = lookAt(e, tg, [0, 1, 0]), p = perspective(fovy, w / h, cam.dist * 0.01, cam.dist * 100 + 10 * radius0);
  /* Light from above and a little from the viewer's left, as in the PNG preview. */
  var l = norm([0.45 * v.z[0] + 0.8 * v.y[0] - 0.3 * v.x[0], 0.45 * v.z[1] + 0.8 * v.y[1] - 0.3 * v.x[1] + 0.4, 0.45 * v.z[2] + 0.8 * v.y[2] - 0.3 * v.x[2]]);
  return {mvp: mul(p, v.m), light: l};
}
/* Ground: a square around everything the body visits (and the task's points), with a grid of
 * round spacing (viewer.c draws the same square for a terrain). */
var task = M.task || null, terrain = M.terrain || null;
var glo = [lo[0], lo[2]], ghi = [hi[0], hi[2]];
function widen(x, z) { if (isFinite(x) && isFinite(z)) { glo[0] = Math.min(glo[0], x); ghi[0] = Math.max(ghi[0], x); glo[1] = Math.min(glo[1], z); ghi[1] = Math.max(ghi[1], z); } }
if (task && task.kind === 'target' && task.target) widen(task.target[0], task.target[2]);
if (task && task.path) for (var wi = 0; wi < task.path.length; wi += 4) widen(task.path[wi + 1], task.path[wi + 3]);
var gExt = Math.max(ghi[0] - glo[0], ghi[1] - glo[1]) + 4 * radius0;
var gSpacing = Math.pow(10, Math.floor(Math.log(gExt / 8) / Math.LN10));
if (gExt / gSpacing > 40) gSpacing *= 5; else if (gExt / gSpacing > 16) gSpacing *= 2;
var gcx = (glo[0] + ghi[0]) / 2, gcz = (glo[1] + ghi[1]) / 2;
var gx0 = Math.floor((gcx - gExt / 2) / gSpacing) * gSpacing, gz0 = Math.floor((gcz - gExt / 2) / gSpacing) * gSpacing;
var gn = Math.ceil(gExt / gSpacing) + 1, gx1 = gx0 + gn * gSpacing, gz1 = gz0 + gn * gSpacing;
var groundTris = [gx0, ground, gz0, gx1, ground, gz0, gx1, ground, gz1, gx0, ground, gz0, gx1, ground, gz1, gx0, ground, gz1];
var gridLines = [];
for (var gi = 0; gi <= gn; gi++) {
  var gx = gx0 + gi * gSpacing, gz = gz0 + gi * gSpacing;
  gridLines.push(gx, ground, gz0, gx, ground, gz1, gx0, ground, gz, gx1, ground, gz);
}
var pathShadow = [];
for (var pi = 0; pi < traj.length; pi += 3) pathShadow.push(traj[pi], terrain ? terrain.shadow[pi / 3] : ground, traj[pi + 2]);
if (terrain) { groundTris = terrain.tris; gridLines = terrain.lines; }
function groundAt(x, z) {
  if (!terrain) return ground;
  /* The shadow's height at the trajectory row closest in (x, z): enough to seat a marker. */
  var best = Infinity, y = ground;
  for (var i = 0; i < traj.length; i += 3) {
    var d = (traj[i] - x) * (traj[i] - x) + (traj[i + 2] - z) * (traj[i + 2] - z);
    if (d < best && terrain.shadow[i / 3] !== null) { best = d; y = terrain.shadow[i / 3]; }
  }
  return y;
}

/* Task markers as line segments: what is wanted (green) and what was reached (blue). */
var want = [], reached = [], wantPts = [];
function seg(a, x0, y0, z0, x1, y1, z1) { a.push(x0, y0, z0, x1, y1, z1); }
function arrow(a, p, d, len) {
  var n = Math.sqrt(d[0] * d[0] + d[2] * d[2]);
  if (!(n > 0)) return;
  var ux = d[0] / n * len, uz = d[2] / n * len, ex = p[0] + ux, ez = p[2] + uz;
  seg(a, p[0], p[1], p[2], ex, p[1], ez);
  seg(a, ex, p[1], ez, ex - 0.3 * ux + 0.18 * uz, p[1], ez - 0.3 * uz - 0.18 * ux);
  seg(a, ex, p[1], ez, ex - 0.3 * ux - 0.18 * uz, p[1], ez - 0.3 * uz + 0.18 * ux);
}
var lastCom = traj.length >= 3 ? traj.slice(traj.length - 3) : null;
if (task && task.target) {
  var tg = task.target, r = 0.15 * radius0, gy = task.targetGround !== undefined && task.targetGround !== null ? task.targetGround : ground;
  seg(want, tg[0] - r, tg[1], tg[2], tg[0] + r, tg[1], tg[2]); seg(want, tg[0], tg[1] - r, tg[2], tg[0], tg[1] + r, tg[2]);
  seg(want, tg[0], tg[1], tg[2] - r, tg[0], tg[1], tg[2] + r); seg(want, tg[0], gy, tg[2], tg[0], tg[1], tg[2]);
  wantPts.push(tg[0], tg[1], tg[2]);
  if (lastCom) seg(reached, lastCom[0], lastCom[1], lastCom[2], tg[0], tg[1], tg[2]);
}
if (task && task.path) {
  for (var k = 0; k + 4 < task.path.length; k += 4) seg(want, task.path[k + 1], task.path[k + 2], task.path[k + 3], task.path[k + 5], task.path[k + 6], task.path[k + 7]);
  for (k = 0; k < task.path.length; k += 4) wantPts.push(task.path[k + 1], task.path[k + 2], task.path[k + 3]);
}
if (task && task.heading && lastCom) {
  var at = [lastCom[0], groundAt(lastCom[0], lastCom[2]) + 0.02 * radius0, lastCom[2]];
  arrow(want, at, task.heading, 1.2 * radius0);
  if (task.forward1) arrow(reached, at, task.forward1, 1.2 * radius0);
}
/* Where the path wants the centre of mass at time t (linear between waypoints, held outside). */
function pathAt(t) {
  var P = task.path, n = P.length / 4;
  if (t <= P[0]) return [P[1], P[2], P[3]];
  for (var i = 0; i + 1 < n; i++) if (t <= P[4 * i + 4]) {
    var u = (t - P[4 * i]) / (P[4 * i + 4] - P[4 * i] || 1);
    return [P[4 * i + 1] + u * (P[4 * i + 5] - P[4 * i + 1]), P[4 * i + 2] + u * (P[4 * i + 6] - P[4 * i + 2]), P[4 * i + 3] + u * (P[4 * i + 7] - P[4 * i + 3])];
  }
  return [P[4 * n - 3], P[4 * n - 2], P[4 * n - 1]];
}

/* Position of vertex i in frame f (for the 2D fallback). */
function vertex(f, i) {
  var o = 3 * (f * nv + i);
  if (M.enc === 'i16') return [M.c[0] + M.h[0] * pos[o] / 32767, M.c[1] + M.h[1] * pos[o + 1] / 32767, M.c[2] + M.h[2] * pos[o + 2] / 32767];
  return [pos[o], pos[o + 1], pos[o + 2]];
}

/* ---- WebGL renderer ---- */
var canvas = $('gl'), gl = null, R = null;
function makeGL() {
  try { gl = canvas.getContext('webgl', {antialias: true}) || canvas.getContext('experimental-webgl'); } catch (x) { gl = null; }
  if (!gl) return null;
  var deriv = gl.getExtension('OES_standard_derivatives');
  var uint = gl.getExtension('OES_element_index_uint');
  function shader(type, src) {
    var s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s);
    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(s));
    return s;
  }
  function program(vs, fs) {
    var p = gl.createProgram();
    gl.attachShader(p, shader(gl.VERTEX_SHADER, vs)); gl.attachShader(p, shader(gl.FRAGMENT_SHADER, fs));
    gl.bindAttribLocation(p, 0, 'a_pos'); gl.linkProgram(p);
    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(p));
    return p;
  }
  var meshVS = 'attribute vec3 a_pos; uniform mat4 u_mvp; uniform vec3 u_c; uniform vec3 u_h; varying vec3 v_w;' +
    'void main() { vec3 p = u_c + u_h * a_pos; v_w = p; gl_Position = u_mvp * vec4(p, 1.0); }';
  /* Flat shading from screen-space derivatives of the world position: no normals to upload
   * or recompute per frame. */
  var meshFS = deriv ?
    '#extension GL_OES_standard_derivatives : enable\nprecision highp float; varying vec3 v_w; uniform vec3 u_l; uniform vec3 u_col;' +
    'void main() { vec3 n = normalize(cross(dFdx(v_w), dFdy(v_w))); gl_FragColor = vec4(u_col * (0.32 + 0.68 * abs(dot(n, u_l))), 1.0); }' :
    'precision mediump float; varying vec3 v_w; uniform vec3 u_l; uniform vec3 u_col; void main() { gl_FragColor = vec4(u_col * 0.8, 1.0); }';
  var lineVS = 'attribute vec3 a_pos; uniform mat4 u_mvp; uniform float u_ps; void main() { gl_Position = u_mvp * vec4(a_pos, 1.0); gl_PointSize = u_ps; }';
  var lineFS = 'precision mediump float; uniform vec4 u_col; void main() { gl_FragColor = u_col; }';
  var r = {mesh: program(meshVS, meshFS), line: program(lineVS, lineFS)};
  if (!deriv) note('WebGL lacks OES_standard_derivatives: the surface is drawn unshaded.');
  if (nv > 65536 && !uint) throw new Error('more than 65536 vertices need OES_element_index_uint');
  r.idxType = nv > 65536 ? gl.UNSIGNED_INT : gl.UNSIGNED_SHORT;
  r.idx = gl.createBuffer(); gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, r.idx);
  gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, nv > 65536 ? faces : new Uint16Array(faces), gl.STATIC_DRAW);
  /* Every frame stays on the GPU; a frame is drawn by pointing the attribute at its offset. */
  r.pos = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, r.pos); gl.bufferData(gl.ARRAY_BUFFER, pos, gl.STATIC_DRAW);
  function buf(a) { var b = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, b); gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(a), gl.STATIC_DRAW); return {b: b, n: a.length / 3}; }
  r.groundTris = buf(groundTris); r.grid = buf(gridLines); r.path = buf(traj); r.pathShadow = buf(pathShadow);
  r.want = buf(want); r.reached = buf(reached); r.wantPts = buf(wantPts); r.cursor = buf([0, 0, 0]);
  function loc(p, names) { var o = {}; names.forEach(function (n) { o[n] = gl.getUniformLocation(p, n); }); return o; }
  r.mu = loc(r.mesh, ['u_mvp', 'u_c', 'u_h', 'u_l', 'u_col']);
  r.lu = loc(r.line, ['u_mvp', 'u_ps', 'u_col']);
  return r;
}
function drawGL(w, h) {
  var c = camera(w, h);
  gl.viewport(0, 0, w, h);
  gl.clearColor(0.933, 0.941, 0.957, 1); gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  gl.enable(gl.DEPTH_TEST);
  gl.enableVertexAttribArray(0);
  gl.useProgram(R.line);
  gl.uniformMatrix4fv(R.lu.u_mvp, false, c.mvp); gl.uniform1f(R.lu.u_ps, 9);
  function lines(b, mode, col, first, count) {
    gl.bindBuffer(gl.ARRAY_BUFFER, b.b); gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
    gl.uniform4fv(R.lu.u_col, col); gl.drawArrays(mode, first || 0, count === undefined ? b.n : count);
  }
  gl.enable(gl.POLYGON_OFFSET_FILL); gl.polygonOffset(1, 1);
  if (terrain) {
    /* Shaded like the body (the slope, the bumps and the boxes' faces read in 3D). */
    gl.useProgram(R.mesh);
    gl.uniformMatrix4fv(R.mu.u_mvp, false, c.mvp); gl.uniform3fv(R.mu.u_l, c.light);
    gl.uniform3fv(R.mu.u_c, [0, 0, 0]); gl.uniform3fv(R.mu.u_h, [1, 1, 1]);
    gl.bindBuffer(gl.ARRAY_BUFFER, R.groundTris.b); gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, 0);
    gl.uniform3fv(R.mu.u_col, [0.84, 0.855, 0.88]); gl.drawArrays(gl.TRIANGLES, 0, 3 * terrain.nground);
    gl.uniform3fv(R.mu.u_col, [0.66, 0.7, 0.76]); gl.drawArrays(gl.TRIANGLES, 3 * terrain.nground, 3 * (terrain.ntri - terrain.nground));
    gl.useProgram(R.line);
  } else {
    lines(R.groundTris, gl.TRIANGLES, [0.81, 0.824, 0.847, 1]);
  }
  gl.disable(gl.POLYGON_OFFSET_FILL);
  lines(R.grid, gl.LINES, [0.6, 0.62, 0.66, 1]);
  lines(R.pathShadow, gl.LINE_STRIP, [0.6, 0.7, 0.9, 1]);
  lines(R.path, gl.LINE_STRIP, [0.165, 0.435, 0.859, 1]);
  if (R.want.n) lines(R.want, gl.LINES, [0.1, 0.62, 0.25, 1]);
  if (R.reached.n) lines(R.reached, gl.LINES, [0.165, 0.435, 0.859, 1]);
  if (R.wantPts.n) lines(R.wantPts, gl.POINTS, [0.1, 0.62, 0.25, 1]);
  gl.useProgram(R.mesh);
  gl.uniformMatrix4fv(R.mu.u_mvp, false, c.mvp); gl.uniform3fv(R.mu.u_l, c.light);
  gl.uniform3fv(R.mu.u_col, [0.886, 0.478, 0.18]);
  if (M.enc === 'i16') { gl.uniform3fv(R.mu.u_c, M.c); gl.uniform3fv(R.mu.u_h, M.h.map(function (x) { return x / 32767; })); }
  else { gl.uniform3fv(R.mu.u_c, [0, 0, 0]); gl.uniform3fv(R.mu.u_h, [1, 1, 1]); }
  var bpe = M.enc === 'i16' ? 2 : 4;
  gl.bindBuffer(gl.ARRAY_BUFFER, R.pos);
  gl.vertexAttribPointer(0, 3, M.enc === 'i16' ? gl.SHORT : gl.FLOAT, false, 0, state.frame * nv * 3 * bpe);
  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, R.idx);
  gl.drawElements(gl.TRIANGLES, nf * 3, R.idxType, 0);
  gl.useProgram(R.line); gl.disable(gl.DEPTH_TEST);
  var r = Math.min(state.frame * every, R.path.n - 1);
  if (r >= 0) lines(R.path, gl.POINTS, [0.1, 0.25, 0.6, 1], r, 1);
  if (task && task.path && task.path.length) {
    gl.bindBuffer(gl.ARRAY_BUFFER, R.cursor.b); gl.bufferSubData(gl.ARRAY_BUFFER, 0, new Float32Array(pathAt(state.frame * M.frameDt)));
    lines(R.cursor, gl.POINTS, [0.05, 0.45, 0.15, 1]);
  }
}

/* ---- 2D canvas fallback (no WebGL): painter's algorithm, far triangles first ---- */
var ctx2d = null, order = null, depth = null, scr = null;
function draw2D(w, h) {
  var c = camera(w, h), m = c.mvp;
  if (!scr) { scr = new Float32Array(3 * nv); depth = new Float32Array(nf); order = new Uint32Array(nf); }
  function proj(p, o) {
    var x = m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12], y = m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13];
    var q = m[3] * p[0] + m[7] * p[1] + m[11] * p[2] + m[15];
    o[0] = (x / q + 1) * w / 2; o[1] = (1 - y / q) * h / 2; o[2] = q;
    return o;
  }
  ctx2d.fillStyle = '#eef0f4'; ctx2d.fillRect(0, 0, w, h);
  var a = [0, 0, 0], b = [0, 0, 0];
  function polyline(arr, step, col) {
    ctx2d.strokeStyle = col; ctx2d.beginPath();
    for (var i = 0; i + 2 * step - 1 < arr.length; i += 2 * step) {
      proj([arr[i], arr[i + 1], arr[i + 2]], a); proj([arr[i + step], arr[i + step + 1], arr[i + step + 2]], b);
      if (a[2] > 0 && b[2] > 0) { ctx2d.moveTo(a[0], a[1]); ctx2d.lineTo(b[0], b[1]); }
    }
    ctx2d.stroke();
  }
  polyline(gridLines, 3, '#9aa0aa');
  polyline(want, 3, '#1a9e40');
  polyline(reached, 3, '#2a6fdb');
  var pathSegs = [];
  for (var i = 0; i + 5 < traj.length; i += 3) pathSegs.push(traj[i], traj[i + 1], traj[i + 2], traj[i + 3], traj[i + 4], traj[i + 5]);
  polyline(pathSegs, 3, '#2a6fdb');
  var p = [0, 0, 0];
  for (var v = 0; v < nv; v++) { proj(vertex(state.frame, v), p); scr[3 * v] = p[0]; scr[3 * v + 1] = p[1]; scr[3 * v + 2] = p[2]; }
  for (var t = 0; t < nf; t++) { order[t] = t; depth[t] = scr[3 * faces[3 * t] + 2] + scr[3 * faces[3 * t + 1] + 2] + scr[3 * faces[3 * t + 2] + 2]; }
  order.sort(function (i, j) { return depth[j] - depth[i]; });
  for (var k = 0; k < nf; k++) {
    var f = order[k], i0 = faces[3 * f], i1 = faces[3 * f + 1], i2 = faces[3 * f + 2];
    if (scr[3 * i0 + 2] <= 0 || scr[3 * i1 + 2] <= 0 || scr[3 * i2 + 2] <= 0) continue;
    var p0 = vertex(state.frame, i0), n = norm(cross(sub(vertex(state.frame, i1), p0), sub(vertex(state.frame, i2), p0)));
    var s = 0.32 + 0.68 * Math.abs(dot(n, c.light));
    ctx2d.fillStyle = 'rgb(' + Math.round(226 * s) + ',' + Math.round(122 * s) + ',' + Math.round(46 * s) + ')';
    ctx2d.strokeStyle = ctx2d.fillStyle;
    ctx2d.beginPath(); ctx2d.moveTo(scr[3 * i0], scr[3 * i0 + 1]); ctx2d.lineTo(scr[3 * i1], scr[3 * i1 + 1]); ctx2d.lineTo(scr[3 * i2], scr[3 * i2 + 1]);
    ctx2d.closePath(); ctx2d.fill(); ctx2d.stroke();
  }
}

/* ---- Loop, controls ---- */
var slider = $('frame'), flabel = $('flabel'), playBtn = $('play');
function setFrame(f) {
  state.frame = ((f % F) + F) % F; state.t = state.frame * M.frameDt; state.dirty = true;
  slider.value = state.frame;
  flabel.textContent = 'frame ' + (state.frame * M.step) + ' / ' + ((F - 1) * M.step) + '  t = ' + (state.frame * M.frameDt).toFixed(2) + ' s';
}
function draw() {
  var dpr = window.devicePixelRatio || 1, w = Math.max(1, Math.round(canvas.clientWidth * dpr)), h = Math.max(1, Math.round(canvas.clientHeight * dpr));
  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }
  if (R) drawGL(w, h); else if (ctx2d) draw2D(w, h);
  state.dirty = false;
}
var last = null;
function tick(now) {
  if (last !== null && state.playing && F > 1) {
    state.t += Math.min(0.25, (now - last) / 1000) * state.speed;
    var f = Math.floor(state.t / M.frameDt) % F;
    if (f !== state.frame) { var t = state.t; setFrame(f); state.t = t % (F * M.frameDt); }
  }
  last = now;
  if (state.dirty) draw();
  requestAnimationFrame(tick);
}
function wire() {
  slider.max = F - 1;
  slider.addEventListener('input', function () { setFrame(+slider.value); });
  playBtn.addEventListener('click', function () { state.playing = !state.playing; playBtn.textContent = state.playing ? 'Pause' : 'Play'; });
  $('speed').addEventListener('change', function () { state.speed = +this.value; });
  $('follow').addEventListener('change', function () { cam.follow = this.checked; if (!cam.follow) cam.dist = Math.max(cam.dist, 0.8 * Math.sqrt(dot(sub(hi, lo), sub(hi, lo))) / Math.sin(fovy / 2)); state.dirty = true; });
  $('reset').addEventListener('click', resetView);
  var drag = null;
  canvas.addEventListener('pointerdown', function (e) { drag = [e.clientX, e.clientY]; canvas.setPointerCapture(e.pointerId); canvas.style.cursor = 'grabbing'; });
  canvas.addEventListener('pointerup', function () { drag = null; canvas.style.cursor = 'grab'; });
  canvas.addEventListener('pointermove', function (e) {
    if (!drag) return;
    cam.yaw -= (e.clientX - drag[0]) * 0.008; cam.pitch = Math.max(-0.2, Math.min(1.5, cam.pitch + (e.clientY - drag[1]) * 0.008));
    drag = [e.clientX, e.clientY]; state.dirty = true;
  });
  canvas.addEventListener('wheel', function (e) { e.preventDefault(); cam.dist *= Math.exp(Math.max(-1, Math.min(1, e.deltaY * 0.0015))); state.dirty = true; }, {passive: false});
  window.addEventListener('keydown', function (e) {
    if (e.target && e.target.tagName === 'SELECT') return;
    if (e.key === ' ') { e.preventDefault(); playBtn.click(); }
    else if (e.key === 'ArrowRight') { state.playing = false; playBtn.textContent = 'Play'; setFrame(state.frame + 1); }
    else if (e.key === 'ArrowLeft') { state.playing = false; playBtn.textContent = 'Play'; setFrame(state.frame - 1); }
  });
  window.addEventListener('resize', function () { state.dirty = true; });
}

decode('mlc-faces', 12 * nf, function (fb) {
  faces = new Uint32Array(fb.buffer);
  decode('mlc-pos', (M.enc === 'i16' ? 6 : 12) * nv * F, function (pb) {
    pos = M.enc === 'i16' ? new Int16Array(pb.buffer) : new Float32Array(pb.buffer);
    /* #2d in the URL forces the fallback (to check it in a browser that has WebGL). */
    if (location.hash !== '#2d') {
      try { R = makeGL(); } catch (x) { R = null; note('WebGL failed (' + x.message + ').'); }
    }
    if (!R) {
      note('WebGL is not available: drawing with the slower 2D canvas instead.');
      ctx2d = canvas.getContext('2d');
    }
    overlay.textContent = '';
    wire(); setFrame(0); draw();
    document.body.dataset.webgl = R ? '1' : '0';
    /* What the page draws of the task and the terrain; tests read these. */
    document.body.dataset.task = task ? task.kind : '';
    document.body.dataset.terrain = String(terrain ? terrain.ntri : 0);
    /* No network: the page loads nothing (the CSP forbids it); tests read this count. */
    document.body.dataset.resources = String(performance.getEntriesByType('resource').length);
    document.body.dataset.loadMs = String(Math.round(performance.now()));
    document.body.dataset.ready = String(F);
    requestAnimationFrame(tick);
  });
});
})();
