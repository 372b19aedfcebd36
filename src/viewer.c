/* viewer.c: load a run directory (surface.obj, animation.pc2 and the optional CSV/JSON files)
 * and write the self-contained HTML viewer view.html. See viewer.h.
 *
 * The page is a fixed HTML/CSS/JS template (page_head and page_tail below, one string per
 * line because ISO C only guarantees 4095-character literals) around the run's data: a JSON
 * <script> with the metadata, the trajectory and the history, the JSON files as they are, and
 * the faces and positions as base64 in several <script type="application/octet-stream">
 * elements of at most 4 MiB each, which the page decodes piece by piece so that loading a big
 * surface neither freezes the tab nor needs one giant string. */
#include "modalloco/viewer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "modalloco/output.h"
#include "modalloco/sim.h"

/* The page template (generated from an HTML file, one literal per line). */
static const char *const page_head[] = {
    "<!DOCTYPE html>\n",
    "<html lang=\"en\">\n",
    "<head>\n",
    "<meta charset=\"utf-8\">\n",
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src "
    "'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n",
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
    "<title>modalloco gait viewer</title>\n",
    "<style>\n",
    "body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: #f4f5f7; color: #222; }\n",
    "header { padding: 8px 16px; background: #2b2f36; color: #eee; }\n",
    "header h1 { display: inline; font-size: 18px; margin-right: 12px; }\n",
    "main { display: flex; flex-wrap: wrap; gap: 12px; padding: 12px; }\n",
    "#stage { flex: 3 1 560px; min-width: 320px; }\n",
    "#view { position: relative; height: 62vh; min-height: 300px; background: #eef0f4;\n",
    "        border: 1px solid #ccd; }\n",
    "#gl { width: 100%; height: 100%; display: block; cursor: grab; touch-action: none; }\n",
    "#overlay { position: absolute; left: 10px; top: 8px; color: #445; pointer-events: none; }\n",
    "#controls { display: flex; align-items: center; gap: 10px; padding: 6px 0; flex-wrap: wrap; "
    "}\n",
    "#frame { flex: 1 1 200px; }\n",
    "aside { flex: 1 1 320px; min-width: 280px; }\n",
    "aside h2 { font-size: 15px; margin: 8px 0 4px; }\n",
    "table { border-collapse: collapse; width: 100%; }\n",
    "td { padding: 2px 6px; border-bottom: 1px solid #dde; vertical-align: top; }\n",
    "td:first-child { color: #556; white-space: nowrap; }\n",
    "td:last-child { font-variant-numeric: tabular-nums; word-break: break-all; }\n",
    "#plot svg { width: 100%; height: auto; background: #fff; border: 1px solid #ccd; }\n",
    "#notes li { margin-bottom: 2px; }\n",
    ".key { display: inline-block; width: 14px; height: 3px; vertical-align: middle; }\n",
    "</style>\n",
    "</head>\n",
    "<body>\n",
    "<header><h1>modalloco gait</h1><span id=\"subtitle\"></span></header>\n",
    "<main>\n",
    "<section id=\"stage\">\n",
    "<div id=\"view\"><canvas id=\"gl\"></canvas><div id=\"overlay\">loading&hellip;</div></div>\n",
    "<div id=\"controls\">\n",
    "<button id=\"play\" type=\"button\">Pause</button>\n",
    "<input id=\"frame\" type=\"range\" min=\"0\" max=\"0\" value=\"0\">\n",
    "<span id=\"flabel\"></span>\n",
    "<label>speed <select id=\"speed\"><option value=\"0.1\">0.1&times;</option><option "
    "value=\"0.25\">0.25&times;</option><option value=\"0.5\">0.5&times;</option><option "
    "value=\"1\" selected>1&times;</option><option "
    "value=\"2\">2&times;</option></select></label>\n",
    "<label><input id=\"follow\" type=\"checkbox\" checked> follow</label>\n",
    "<button id=\"reset\" type=\"button\">reset view</button>\n",
    "</div>\n",
    "<div>Drag to orbit, wheel to zoom, space to play/pause, arrow keys step frames.\n",
    "<span class=\"key\" style=\"background:#2a6fdb\"></span> centre of mass path.</div>\n",
    "</section>\n",
    "<aside>\n",
    "<h2>Result</h2>\n",
    "<table id=\"numbers\"></table>\n",
    "<h2>Convergence</h2>\n",
    "<div id=\"plot\"></div>\n",
    "<h2>Notes</h2>\n",
    "<ul id=\"notes\"></ul>\n",
    "</aside>\n",
    "</main>\n",
};

static const char *const page_tail[] = {
    "<script>\n",
    "(function () {\n",
    "'use strict';\n",
    "function $(id) { return document.getElementById(id); }\n",
    "var notesEl = $('notes'), overlay = $('overlay');\n",
    "function note(t) { var li = document.createElement('li'); li.textContent = t; "
    "notesEl.appendChild(li); }\n",
    "function parseTag(id) {\n",
    "  var e = $(id);\n",
    "  if (!e) return null;\n",
    "  try { return JSON.parse(e.textContent); } catch (x) { note('The embedded ' + id + '.json "
    "could not be parsed.'); return null; }\n",
    "}\n",
    "var M = parseTag('meta'), config = parseTag('config'), params = parseTag('params'), result = "
    "parseTag('result');\n",
    "(M.notes || []).forEach(note);\n",
    "$('subtitle').textContent = M.dir;\n",
    "\n",
    "/* ---- Key numbers ---- */\n",
    "function get(o, path) {\n",
    "  var parts = path.split('.');\n",
    "  for (var i = 0; i < parts.length; i++) { if (o === null || typeof o !== 'object') return "
    "undefined; o = o[parts[i]]; }\n",
    "  return o;\n",
    "}\n",
    "function fmt(v) {\n",
    "  if (typeof v === 'number') return Math.abs(v) >= 1e5 || (v !== 0 && Math.abs(v) < 1e-3) ? "
    "v.toExponential(4) : String(+v.toPrecision(6));\n",
    "  if (Array.isArray(v)) return '[' + v.map(fmt).join(', ') + ']';\n",
    "  if (v === null) return 'null';\n",
    "  return String(v);\n",
    "}\n",
    "(function () {\n",
    "  var tbl = $('numbers'), res = result || params;\n",
    "  function row(label, v) {\n",
    "    if (v === undefined || v === '') return;\n",
    "    var tr = document.createElement('tr'), a = document.createElement('td'), b = "
    "document.createElement('td');\n",
    "    a.textContent = label; b.textContent = fmt(v); tr.appendChild(a); tr.appendChild(b); "
    "tbl.appendChild(tr);\n",
    "  }\n",
    "  row('J', get(res, 'J'));\n",
    "  row('displacement (m)', get(res, 'displacement'));\n",
    "  row('J_disp', get(res, 'J_disp'));\n",
    "  row('J_align', get(res, 'J_align'));\n",
    "  row('J_work', get(res, 'J_work'));\n",
    "  row('generations', get(params, 'generations'));\n",
    "  row('evaluations', get(params, 'evaluations'));\n",
    "  row('stop reason', get(params, 'stop_reason'));\n",
    "  row('mesh', get(params, 'mesh.path') || (config ? get(config, 'mesh.path') || '(sample "
    "mesh)' : undefined));\n",
    "  row('mesh vertices / tets', params && params.mesh ? params.mesh.vertices + ' / ' + "
    "params.mesh.tets : undefined);\n",
    "  row('surface vertices / triangles', M.nv + ' / ' + M.nf);\n",
    "  row('steps x dt (s)', config ? get(config, 'sim.steps') + ' x ' + get(config, 'sim.dt') : "
    "undefined);\n",
    "  row('actuation modes x sinusoids', config ? get(config, 'actuation.modes') + ' x ' + "
    "get(config, 'actuation.sinusoids') : undefined);\n",
    "  row('objective', config ? get(config, 'objective.kind') + ' along ' + fmt(get(config, "
    "'objective.direction')) : undefined);\n",
    "  row('CMA-ES population', get(config, 'cmaes.population'));\n",
    "  row('CMA-ES generations', get(config, 'cmaes.generations'));\n",
    "  row('CMA-ES sigma0', get(config, 'cmaes.sigma0'));\n",
    "  row('seed', get(config, 'cmaes.seed'));\n",
    "  row('frames (shown / written)', M.frames + ' / ' + M.framesTotal);\n",
    "})();\n",
    "\n",
    "/* ---- Convergence plot (inline SVG) ---- */\n",
    "(function () {\n",
    "  var h = M.hist, el = $('plot');\n",
    "  if (!h || !h.length) { el.textContent = 'No history.csv in this directory (simulate writes "
    "none; optimize does).'; return; }\n",
    "  var W = 420, H = 240, L = 62, R = 10, T = 24, B = 34, lo = Infinity, hi = -Infinity;\n",
    "  h.forEach(function (r) { for (var k = 1; k < 3; k++) if (isFinite(r[k])) { lo = "
    "Math.min(lo, r[k]); hi = Math.max(hi, r[k]); } });\n",
    "  if (!(lo <= hi)) { el.textContent = 'history.csv holds no finite values.'; return; }\n",
    "  if (hi - lo < 1e-12) { lo -= 0.5; hi += 0.5; }\n",
    "  var pad = 0.05 * (hi - lo); lo -= pad; hi += pad;\n",
    "  var g0 = h[0][0], g1 = h[h.length - 1][0]; if (g1 === g0) { g0 -= 0.5; g1 += 0.5; }\n",
    "  function X(g) { return L + (W - L - R) * (g - g0) / (g1 - g0); }\n",
    "  function Y(v) { return T + (H - T - B) * (hi - v) / (hi - lo); }\n",
    "  function line(k) {\n",
    "    return h.filter(function (r) { return isFinite(r[k]); }).map(function (r) { return "
    "X(r[0]).toFixed(1) + ',' + Y(r[k]).toFixed(1); }).join(' ');\n",
    "  }\n",
    "  var s = '<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 ' + W + ' ' + H + '\">';\n",
    "  s += '<rect x=\"' + L + '\" y=\"' + T + '\" width=\"' + (W - L - R) + '\" height=\"' + (H - "
    "T - B) + '\" fill=\"none\" stroke=\"#99a\"/>';\n",
    "  for (var i = 0; i <= 4; i++) {\n",
    "    var v = lo + (hi - lo) * i / 4, y = Y(v);\n",
    "    s += '<line x1=\"' + L + '\" x2=\"' + (W - R) + '\" y1=\"' + y.toFixed(1) + '\" y2=\"' + "
    "y.toFixed(1) + '\" stroke=\"#e3e5ea\"/>';\n",
    "    s += '<text x=\"' + (L - 4) + '\" y=\"' + (y + 4).toFixed(1) + '\" font-size=\"11\" "
    "text-anchor=\"end\">' + (+v.toPrecision(3)) + '</text>';\n",
    "  }\n",
    "  s += '<text x=\"' + L + '\" y=\"' + (H - 18) + '\" font-size=\"11\">' + g0 + '</text>';\n",
    "  s += '<text x=\"' + (W - R) + '\" y=\"' + (H - 18) + '\" font-size=\"11\" "
    "text-anchor=\"end\">' + g1 + '</text>';\n",
    "  s += '<text x=\"' + ((L + W - R) / 2) + '\" y=\"' + (H - 4) + '\" font-size=\"12\" "
    "text-anchor=\"middle\">generation</text>';\n",
    "  s += '<polyline fill=\"none\" stroke=\"#d9480f\" stroke-width=\"2\" points=\"' + line(1) + "
    "'\"/>';\n",
    "  s += '<polyline fill=\"none\" stroke=\"#1c7ed6\" stroke-width=\"1.5\" stroke-dasharray=\"4 "
    "3\" points=\"' + line(2) + '\"/>';\n",
    "  s += '<text x=\"' + L + '\" y=\"16\" font-size=\"12\" fill=\"#d9480f\">best J</text>';\n",
    "  s += '<text x=\"' + (L + 60) + '\" y=\"16\" font-size=\"12\" fill=\"#1c7ed6\">median "
    "J</text>';\n",
    "  s += '<text x=\"' + (W - R) + '\" y=\"16\" font-size=\"12\" text-anchor=\"end\">(lower is "
    "better)</text></svg>';\n",
    "  el.innerHTML = s;\n",
    "})();\n",
    "\n",
    "/* ---- Embedded binary data: base64 split over several script elements ---- */\n",
    "function decode(cls, total, done) {\n",
    "  var parts = document.querySelectorAll('script.' + cls), out = new Uint8Array(total), off = "
    "0, i = 0;\n",
    "  function step() {\n",
    "    var t0 = Date.now();\n",
    "    while (i < parts.length && Date.now() - t0 < 40) {\n",
    "      var s = atob(parts[i].textContent.trim());\n",
    "      for (var k = 0; k < s.length; k++) out[off + k] = s.charCodeAt(k);\n",
    "      off += s.length; i++;\n",
    "    }\n",
    "    overlay.textContent = 'loading ' + cls.replace('mlc-', '') + ' ' + Math.round(100 * off / "
    "Math.max(total, 1)) + '%';\n",
    "    if (i < parts.length) setTimeout(step, 0);\n",
    "    else if (off !== total) { overlay.textContent = 'embedded data is damaged (' + off + ' of "
    "' + total + ' bytes)'; }\n",
    "    else done(out);\n",
    "  }\n",
    "  step();\n",
    "}\n",
    "\n",
    "/* ---- Small vector and matrix helpers (column-major 4x4) ---- */\n",
    "function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }\n",
    "function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }\n",
    "function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * "
    "b[1] - a[1] * b[0]]; }\n",
    "function norm(a) { var n = Math.sqrt(dot(a, a)) || 1; return [a[0] / n, a[1] / n, a[2] / n]; "
    "}\n",
    "function perspective(fovy, aspect, n, f) {\n",
    "  var t = 1 / Math.tan(fovy / 2), m = new Float32Array(16);\n",
    "  m[0] = t / aspect; m[5] = t; m[10] = (f + n) / (n - f); m[11] = -1; m[14] = 2 * f * n / (n "
    "- f);\n",
    "  return m;\n",
    "}\n",
    "function lookAt(e, c, u) {\n",
    "  var z = norm(sub(e, c)), x = norm(cross(u, z)), y = cross(z, x), m = new "
    "Float32Array(16);\n",
    "  m[0] = x[0]; m[4] = x[1]; m[8] = x[2]; m[12] = -dot(x, e);\n",
    "  m[1] = y[0]; m[5] = y[1]; m[9] = y[2]; m[13] = -dot(y, e);\n",
    "  m[2] = z[0]; m[6] = z[1]; m[10] = z[2]; m[14] = -dot(z, e); m[15] = 1;\n",
    "  return {m: m, x: x, y: y, z: z};\n",
    "}\n",
    "function mul(a, b) {\n",
    "  var o = new Float32Array(16);\n",
    "  for (var i = 0; i < 4; i++) for (var j = 0; j < 4; j++) {\n",
    "    var s = 0;\n",
    "    for (var k = 0; k < 4; k++) s += a[k * 4 + j] * b[i * 4 + k];\n",
    "    o[i * 4 + j] = s;\n",
    "  }\n",
    "  return o;\n",
    "}\n",
    "\n",
    "/* ---- Scene ---- */\n",
    "var nv = M.nv, nf = M.nf, F = M.frames, faces = null, pos = null;\n",
    "var every = Math.max(1, M.trajPerFrame), traj = M.traj, ground = M.ground;\n",
    "var lo = M.lo, hi = M.hi, lo0 = M.lo0, hi0 = M.hi0;\n",
    "var radius0 = 0.5 * Math.sqrt(dot(sub(hi0, lo0), sub(hi0, lo0))) || 1;\n",
    "var cam = {yaw: 0.55, pitch: 0.38, dist: 1, follow: true};\n",
    "var state = {frame: 0, playing: true, speed: 1, t: 0, dirty: true};\n",
    "var fovy = 40 * Math.PI / 180;\n",
    "function resetView() { cam.yaw = 0.55; cam.pitch = 0.38; cam.dist = 1.5 * radius0 / "
    "Math.sin(fovy / 2); state.dirty = true; }\n",
    "resetView();\n",
    "function comAt(f) {\n",
    "  var r = Math.min(f * every, traj.length / 3 - 1);\n",
    "  return r >= 0 ? [traj[3 * r], traj[3 * r + 1], traj[3 * r + 2]] : [(lo0[0] + hi0[0]) / 2, "
    "(lo0[1] + hi0[1]) / 2, (lo0[2] + hi0[2]) / 2];\n",
    "}\n",
    "function camera(w, h) {\n",
    "  var tg = cam.follow ? comAt(state.frame) : [(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, "
    "(lo[2] + hi[2]) / 2];\n",
    "  var cp = Math.cos(cam.pitch), e = [tg[0] + cam.dist * cp * Math.sin(cam.yaw), tg[1] + "
    "cam.dist * Math.sin(cam.pitch), tg[2] + cam.dist * cp * Math.cos(cam.yaw)];\n",
    "  var v = lookAt(e, tg, [0, 1, 0]), p = perspective(fovy, w / h, cam.dist * 0.01, cam.dist * "
    "100 + 10 * radius0);\n",
    "  /* Light from above and a little from the viewer's left, as in the PNG preview. */\n",
    "  var l = norm([0.45 * v.z[0] + 0.8 * v.y[0] - 0.3 * v.x[0], 0.45 * v.z[1] + 0.8 * v.y[1] - "
    "0.3 * v.x[1] + 0.4, 0.45 * v.z[2] + 0.8 * v.y[2] - 0.3 * v.x[2]]);\n",
    "  return {mvp: mul(p, v.m), light: l};\n",
    "}\n",
    "/* Ground: a square around everything the body visits, with a grid of round spacing. */\n",
    "var gExt = Math.max(hi[0] - lo[0], hi[2] - lo[2]) + 4 * radius0;\n",
    "var gSpacing = Math.pow(10, Math.floor(Math.log(gExt / 8) / Math.LN10));\n",
    "if (gExt / gSpacing > 40) gSpacing *= 5; else if (gExt / gSpacing > 16) gSpacing *= 2;\n",
    "var gcx = (lo[0] + hi[0]) / 2, gcz = (lo[2] + hi[2]) / 2;\n",
    "var gx0 = Math.floor((gcx - gExt / 2) / gSpacing) * gSpacing, gz0 = Math.floor((gcz - gExt / "
    "2) / gSpacing) * gSpacing;\n",
    "var gn = Math.ceil(gExt / gSpacing) + 1, gx1 = gx0 + gn * gSpacing, gz1 = gz0 + gn * "
    "gSpacing;\n",
    "var groundTris = [gx0, ground, gz0, gx1, ground, gz0, gx1, ground, gz1, gx0, ground, gz0, "
    "gx1, ground, gz1, gx0, ground, gz1];\n",
    "var gridLines = [];\n",
    "for (var gi = 0; gi <= gn; gi++) {\n",
    "  var gx = gx0 + gi * gSpacing, gz = gz0 + gi * gSpacing;\n",
    "  gridLines.push(gx, ground, gz0, gx, ground, gz1, gx0, ground, gz, gx1, ground, gz);\n",
    "}\n",
    "var pathShadow = [];\n",
    "for (var pi = 0; pi < traj.length; pi += 3) pathShadow.push(traj[pi], ground, traj[pi + "
    "2]);\n",
    "\n",
    "/* Position of vertex i in frame f (for the 2D fallback). */\n",
    "function vertex(f, i) {\n",
    "  var o = 3 * (f * nv + i);\n",
    "  if (M.enc === 'i16') return [M.c[0] + M.h[0] * pos[o] / 32767, M.c[1] + M.h[1] * pos[o + 1] "
    "/ 32767, M.c[2] + M.h[2] * pos[o + 2] / 32767];\n",
    "  return [pos[o], pos[o + 1], pos[o + 2]];\n",
    "}\n",
    "\n",
    "/* ---- WebGL renderer ---- */\n",
    "var canvas = $('gl'), gl = null, R = null;\n",
    "function makeGL() {\n",
    "  try { gl = canvas.getContext('webgl', {antialias: true}) || "
    "canvas.getContext('experimental-webgl'); } catch (x) { gl = null; }\n",
    "  if (!gl) return null;\n",
    "  var deriv = gl.getExtension('OES_standard_derivatives');\n",
    "  var uint = gl.getExtension('OES_element_index_uint');\n",
    "  function shader(type, src) {\n",
    "    var s = gl.createShader(type); gl.shaderSource(s, src); gl.compileShader(s);\n",
    "    if (!gl.getShaderParameter(s, gl.COMPILE_STATUS)) throw new "
    "Error(gl.getShaderInfoLog(s));\n",
    "    return s;\n",
    "  }\n",
    "  function program(vs, fs) {\n",
    "    var p = gl.createProgram();\n",
    "    gl.attachShader(p, shader(gl.VERTEX_SHADER, vs)); gl.attachShader(p, "
    "shader(gl.FRAGMENT_SHADER, fs));\n",
    "    gl.bindAttribLocation(p, 0, 'a_pos'); gl.linkProgram(p);\n",
    "    if (!gl.getProgramParameter(p, gl.LINK_STATUS)) throw new "
    "Error(gl.getProgramInfoLog(p));\n",
    "    return p;\n",
    "  }\n",
    "  var meshVS = 'attribute vec3 a_pos; uniform mat4 u_mvp; uniform vec3 u_c; uniform vec3 u_h; "
    "varying vec3 v_w;' +\n",
    "    'void main() { vec3 p = u_c + u_h * a_pos; v_w = p; gl_Position = u_mvp * vec4(p, 1.0); "
    "}';\n",
    "  /* Flat shading from screen-space derivatives of the world position: no normals to upload\n",
    "   * or recompute per frame. */\n",
    "  var meshFS = deriv ?\n",
    "    '#extension GL_OES_standard_derivatives : enable\\nprecision highp float; varying vec3 "
    "v_w; uniform vec3 u_l; uniform vec3 u_col;' +\n",
    "    'void main() { vec3 n = normalize(cross(dFdx(v_w), dFdy(v_w))); gl_FragColor = vec4(u_col "
    "* (0.32 + 0.68 * abs(dot(n, u_l))), 1.0); }' :\n",
    "    'precision mediump float; varying vec3 v_w; uniform vec3 u_l; uniform vec3 u_col; void "
    "main() { gl_FragColor = vec4(u_col * 0.8, 1.0); }';\n",
    "  var lineVS = 'attribute vec3 a_pos; uniform mat4 u_mvp; uniform float u_ps; void main() { "
    "gl_Position = u_mvp * vec4(a_pos, 1.0); gl_PointSize = u_ps; }';\n",
    "  var lineFS = 'precision mediump float; uniform vec4 u_col; void main() { gl_FragColor = "
    "u_col; }';\n",
    "  var r = {mesh: program(meshVS, meshFS), line: program(lineVS, lineFS)};\n",
    "  if (!deriv) note('WebGL lacks OES_standard_derivatives: the surface is drawn unshaded.');\n",
    "  if (nv > 65536 && !uint) throw new Error('more than 65536 vertices need "
    "OES_element_index_uint');\n",
    "  r.idxType = nv > 65536 ? gl.UNSIGNED_INT : gl.UNSIGNED_SHORT;\n",
    "  r.idx = gl.createBuffer(); gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, r.idx);\n",
    "  gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, nv > 65536 ? faces : new Uint16Array(faces), "
    "gl.STATIC_DRAW);\n",
    "  /* Every frame stays on the GPU; a frame is drawn by pointing the attribute at its offset. "
    "*/\n",
    "  r.pos = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, r.pos); "
    "gl.bufferData(gl.ARRAY_BUFFER, pos, gl.STATIC_DRAW);\n",
    "  function buf(a) { var b = gl.createBuffer(); gl.bindBuffer(gl.ARRAY_BUFFER, b); "
    "gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(a), gl.STATIC_DRAW); return {b: b, n: "
    "a.length / 3}; }\n",
    "  r.groundTris = buf(groundTris); r.grid = buf(gridLines); r.path = buf(traj); r.pathShadow = "
    "buf(pathShadow);\n",
    "  function loc(p, names) { var o = {}; names.forEach(function (n) { o[n] = "
    "gl.getUniformLocation(p, n); }); return o; }\n",
    "  r.mu = loc(r.mesh, ['u_mvp', 'u_c', 'u_h', 'u_l', 'u_col']);\n",
    "  r.lu = loc(r.line, ['u_mvp', 'u_ps', 'u_col']);\n",
    "  return r;\n",
    "}\n",
    "function drawGL(w, h) {\n",
    "  var c = camera(w, h);\n",
    "  gl.viewport(0, 0, w, h);\n",
    "  gl.clearColor(0.933, 0.941, 0.957, 1); gl.clear(gl.COLOR_BUFFER_BIT | "
    "gl.DEPTH_BUFFER_BIT);\n",
    "  gl.enable(gl.DEPTH_TEST);\n",
    "  gl.enableVertexAttribArray(0);\n",
    "  gl.useProgram(R.line);\n",
    "  gl.uniformMatrix4fv(R.lu.u_mvp, false, c.mvp); gl.uniform1f(R.lu.u_ps, 9);\n",
    "  function lines(b, mode, col, first, count) {\n",
    "    gl.bindBuffer(gl.ARRAY_BUFFER, b.b); gl.vertexAttribPointer(0, 3, gl.FLOAT, false, 0, "
    "0);\n",
    "    gl.uniform4fv(R.lu.u_col, col); gl.drawArrays(mode, first || 0, count === undefined ? b.n "
    ": count);\n",
    "  }\n",
    "  gl.enable(gl.POLYGON_OFFSET_FILL); gl.polygonOffset(1, 1);\n",
    "  lines(R.groundTris, gl.TRIANGLES, [0.81, 0.824, 0.847, 1]);\n",
    "  gl.disable(gl.POLYGON_OFFSET_FILL);\n",
    "  lines(R.grid, gl.LINES, [0.6, 0.62, 0.66, 1]);\n",
    "  lines(R.pathShadow, gl.LINE_STRIP, [0.6, 0.7, 0.9, 1]);\n",
    "  lines(R.path, gl.LINE_STRIP, [0.165, 0.435, 0.859, 1]);\n",
    "  gl.useProgram(R.mesh);\n",
    "  gl.uniformMatrix4fv(R.mu.u_mvp, false, c.mvp); gl.uniform3fv(R.mu.u_l, c.light);\n",
    "  gl.uniform3fv(R.mu.u_col, [0.886, 0.478, 0.18]);\n",
    "  if (M.enc === 'i16') { gl.uniform3fv(R.mu.u_c, M.c); gl.uniform3fv(R.mu.u_h, "
    "M.h.map(function (x) { return x / 32767; })); }\n",
    "  else { gl.uniform3fv(R.mu.u_c, [0, 0, 0]); gl.uniform3fv(R.mu.u_h, [1, 1, 1]); }\n",
    "  var bpe = M.enc === 'i16' ? 2 : 4;\n",
    "  gl.bindBuffer(gl.ARRAY_BUFFER, R.pos);\n",
    "  gl.vertexAttribPointer(0, 3, M.enc === 'i16' ? gl.SHORT : gl.FLOAT, false, 0, state.frame * "
    "nv * 3 * bpe);\n",
    "  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, R.idx);\n",
    "  gl.drawElements(gl.TRIANGLES, nf * 3, R.idxType, 0);\n",
    "  gl.useProgram(R.line); gl.disable(gl.DEPTH_TEST);\n",
    "  var r = Math.min(state.frame * every, R.path.n - 1);\n",
    "  if (r >= 0) lines(R.path, gl.POINTS, [0.1, 0.25, 0.6, 1], r, 1);\n",
    "}\n",
    "\n",
    "/* ---- 2D canvas fallback (no WebGL): painter's algorithm, far triangles first ---- */\n",
    "var ctx2d = null, order = null, depth = null, scr = null;\n",
    "function draw2D(w, h) {\n",
    "  var c = camera(w, h), m = c.mvp;\n",
    "  if (!scr) { scr = new Float32Array(3 * nv); depth = new Float32Array(nf); order = new "
    "Uint32Array(nf); }\n",
    "  function proj(p, o) {\n",
    "    var x = m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12], y = m[1] * p[0] + m[5] * p[1] + "
    "m[9] * p[2] + m[13];\n",
    "    var q = m[3] * p[0] + m[7] * p[1] + m[11] * p[2] + m[15];\n",
    "    o[0] = (x / q + 1) * w / 2; o[1] = (1 - y / q) * h / 2; o[2] = q;\n",
    "    return o;\n",
    "  }\n",
    "  ctx2d.fillStyle = '#eef0f4'; ctx2d.fillRect(0, 0, w, h);\n",
    "  var a = [0, 0, 0], b = [0, 0, 0];\n",
    "  function polyline(arr, step, col) {\n",
    "    ctx2d.strokeStyle = col; ctx2d.beginPath();\n",
    "    for (var i = 0; i + 2 * step - 1 < arr.length; i += 2 * step) {\n",
    "      proj([arr[i], arr[i + 1], arr[i + 2]], a); proj([arr[i + step], arr[i + step + 1], "
    "arr[i + step + 2]], b);\n",
    "      if (a[2] > 0 && b[2] > 0) { ctx2d.moveTo(a[0], a[1]); ctx2d.lineTo(b[0], b[1]); }\n",
    "    }\n",
    "    ctx2d.stroke();\n",
    "  }\n",
    "  polyline(gridLines, 3, '#9aa0aa');\n",
    "  var pathSegs = [];\n",
    "  for (var i = 0; i + 5 < traj.length; i += 3) pathSegs.push(traj[i], traj[i + 1], traj[i + "
    "2], traj[i + 3], traj[i + 4], traj[i + 5]);\n",
    "  polyline(pathSegs, 3, '#2a6fdb');\n",
    "  var p = [0, 0, 0];\n",
    "  for (var v = 0; v < nv; v++) { proj(vertex(state.frame, v), p); scr[3 * v] = p[0]; scr[3 * "
    "v + 1] = p[1]; scr[3 * v + 2] = p[2]; }\n",
    "  for (var t = 0; t < nf; t++) { order[t] = t; depth[t] = scr[3 * faces[3 * t] + 2] + scr[3 * "
    "faces[3 * t + 1] + 2] + scr[3 * faces[3 * t + 2] + 2]; }\n",
    "  order.sort(function (i, j) { return depth[j] - depth[i]; });\n",
    "  for (var k = 0; k < nf; k++) {\n",
    "    var f = order[k], i0 = faces[3 * f], i1 = faces[3 * f + 1], i2 = faces[3 * f + 2];\n",
    "    if (scr[3 * i0 + 2] <= 0 || scr[3 * i1 + 2] <= 0 || scr[3 * i2 + 2] <= 0) continue;\n",
    "    var p0 = vertex(state.frame, i0), n = norm(cross(sub(vertex(state.frame, i1), p0), "
    "sub(vertex(state.frame, i2), p0)));\n",
    "    var s = 0.32 + 0.68 * Math.abs(dot(n, c.light));\n",
    "    ctx2d.fillStyle = 'rgb(' + Math.round(226 * s) + ',' + Math.round(122 * s) + ',' + "
    "Math.round(46 * s) + ')';\n",
    "    ctx2d.strokeStyle = ctx2d.fillStyle;\n",
    "    ctx2d.beginPath(); ctx2d.moveTo(scr[3 * i0], scr[3 * i0 + 1]); ctx2d.lineTo(scr[3 * i1], "
    "scr[3 * i1 + 1]); ctx2d.lineTo(scr[3 * i2], scr[3 * i2 + 1]);\n",
    "    ctx2d.closePath(); ctx2d.fill(); ctx2d.stroke();\n",
    "  }\n",
    "}\n",
    "\n",
    "/* ---- Loop, controls ---- */\n",
    "var slider = $('frame'), flabel = $('flabel'), playBtn = $('play');\n",
    "function setFrame(f) {\n",
    "  state.frame = ((f % F) + F) % F; state.t = state.frame * M.frameDt; state.dirty = true;\n",
    "  slider.value = state.frame;\n",
    "  flabel.textContent = 'frame ' + (state.frame * M.step) + ' / ' + ((F - 1) * M.step) + '  t "
    "= ' + (state.frame * M.frameDt).toFixed(2) + ' s';\n",
    "}\n",
    "function draw() {\n",
    "  var dpr = window.devicePixelRatio || 1, w = Math.max(1, Math.round(canvas.clientWidth * "
    "dpr)), h = Math.max(1, Math.round(canvas.clientHeight * dpr));\n",
    "  if (canvas.width !== w || canvas.height !== h) { canvas.width = w; canvas.height = h; }\n",
    "  if (R) drawGL(w, h); else if (ctx2d) draw2D(w, h);\n",
    "  state.dirty = false;\n",
    "}\n",
    "var last = null;\n",
    "function tick(now) {\n",
    "  if (last !== null && state.playing && F > 1) {\n",
    "    state.t += Math.min(0.25, (now - last) / 1000) * state.speed;\n",
    "    var f = Math.floor(state.t / M.frameDt) % F;\n",
    "    if (f !== state.frame) { var t = state.t; setFrame(f); state.t = t % (F * M.frameDt); }\n",
    "  }\n",
    "  last = now;\n",
    "  if (state.dirty) draw();\n",
    "  requestAnimationFrame(tick);\n",
    "}\n",
    "function wire() {\n",
    "  slider.max = F - 1;\n",
    "  slider.addEventListener('input', function () { setFrame(+slider.value); });\n",
    "  playBtn.addEventListener('click', function () { state.playing = !state.playing; "
    "playBtn.textContent = state.playing ? 'Pause' : 'Play'; });\n",
    "  $('speed').addEventListener('change', function () { state.speed = +this.value; });\n",
    "  $('follow').addEventListener('change', function () { cam.follow = this.checked; if "
    "(!cam.follow) cam.dist = Math.max(cam.dist, 0.8 * Math.sqrt(dot(sub(hi, lo), sub(hi, lo))) / "
    "Math.sin(fovy / 2)); state.dirty = true; });\n",
    "  $('reset').addEventListener('click', resetView);\n",
    "  var drag = null;\n",
    "  canvas.addEventListener('pointerdown', function (e) { drag = [e.clientX, e.clientY]; "
    "canvas.setPointerCapture(e.pointerId); canvas.style.cursor = 'grabbing'; });\n",
    "  canvas.addEventListener('pointerup', function () { drag = null; canvas.style.cursor = "
    "'grab'; });\n",
    "  canvas.addEventListener('pointermove', function (e) {\n",
    "    if (!drag) return;\n",
    "    cam.yaw -= (e.clientX - drag[0]) * 0.008; cam.pitch = Math.max(-0.2, Math.min(1.5, "
    "cam.pitch + (e.clientY - drag[1]) * 0.008));\n",
    "    drag = [e.clientX, e.clientY]; state.dirty = true;\n",
    "  });\n",
    "  canvas.addEventListener('wheel', function (e) { e.preventDefault(); cam.dist *= "
    "Math.exp(Math.max(-1, Math.min(1, e.deltaY * 0.0015))); state.dirty = true; }, {passive: "
    "false});\n",
    "  window.addEventListener('keydown', function (e) {\n",
    "    if (e.target && e.target.tagName === 'SELECT') return;\n",
    "    if (e.key === ' ') { e.preventDefault(); playBtn.click(); }\n",
    "    else if (e.key === 'ArrowRight') { state.playing = false; playBtn.textContent = 'Play'; "
    "setFrame(state.frame + 1); }\n",
    "    else if (e.key === 'ArrowLeft') { state.playing = false; playBtn.textContent = 'Play'; "
    "setFrame(state.frame - 1); }\n",
    "  });\n",
    "  window.addEventListener('resize', function () { state.dirty = true; });\n",
    "}\n",
    "\n",
    "decode('mlc-faces', 12 * nf, function (fb) {\n",
    "  faces = new Uint32Array(fb.buffer);\n",
    "  decode('mlc-pos', (M.enc === 'i16' ? 6 : 12) * nv * F, function (pb) {\n",
    "    pos = M.enc === 'i16' ? new Int16Array(pb.buffer) : new Float32Array(pb.buffer);\n",
    "    /* #2d in the URL forces the fallback (to check it in a browser that has WebGL). */\n",
    "    if (location.hash !== '#2d') {\n",
    "      try { R = makeGL(); } catch (x) { R = null; note('WebGL failed (' + x.message + ').'); "
    "}\n",
    "    }\n",
    "    if (!R) {\n",
    "      note('WebGL is not available: drawing with the slower 2D canvas instead.');\n",
    "      ctx2d = canvas.getContext('2d');\n",
    "    }\n",
    "    overlay.textContent = '';\n",
    "    wire(); setFrame(0); draw();\n",
    "    document.body.dataset.webgl = R ? '1' : '0';\n",
    "    /* No network: the page loads nothing (the CSP forbids it); tests read this count. */\n",
    "    document.body.dataset.resources = "
    "String(performance.getEntriesByType('resource').length);\n",
    "    document.body.dataset.loadMs = String(Math.round(performance.now()));\n",
    "    document.body.dataset.ready = String(F);\n",
    "    requestAnimationFrame(tick);\n",
    "  });\n",
    "});\n",
    "})();\n",
    "</script>\n",
    "</body>\n",
    "</html>\n",
};

/* ---- Reading ------------------------------------------------------------------------------- */

/* Whole file as a NUL-terminated string (owned); NULL with *missing set if it does not exist. */
static mlc_status slurp(const char *path, char **text, size_t *len, int *missing, mlc_err *err) {
    *text = NULL;
    if (missing) *missing = 0;
    struct stat st;
    if (missing && stat(path, &st) != 0 && errno == ENOENT) {
        *missing = 1;
        return MLC_OK;
    }
    size_t n = 0;
    mlc_status s = mlc_file_read_all(path, (size_t)1 << 30, NULL, text, &n, err);
    if (s == MLC_OK && len) *len = n;
    return s;
}

/* Parse surface.obj: `v x y z` and `f a b c ...` lines (1-based or negative indices, optional
 * /vt/vn parts, polygons fanned into triangles); everything else is ignored. */
static mlc_status parse_obj(const char *path, char *text, int *nv_out, int **faces_out, int *nf_out,
                            mlc_err *err) {
    int nv = 0, nf = 0, cap = 0;
    int *faces = NULL;
    int line = 0;
    for (char *p = text; *p;) {
        char *eol = strchr(p, '\n');
        if (eol) *eol = 0;
        line++;
        if (p[0] == 'v' && (p[1] == ' ' || p[1] == '\t')) {
            nv++;
        } else if (p[0] == 'f' && (p[1] == ' ' || p[1] == '\t')) {
            int idx[3], k = 0;
            char *q = p + 1;
            for (;;) {
                char *end;
                long v = strtol(q, &end, 10);
                if (end == q) break;
                q = end;
                while (*q && *q != ' ' && *q != '\t' && *q != '\r')
                    q++; /* skip /vt/vn */
                long i = v > 0 ? v - 1 : nv + v;
                if (v == 0 || i < 0 || i >= nv) {
                    mlc_free(faces);
                    return mlc_errf(err, MLC_EPARSE,
                                    "%s:%d: face index %ld out of range "
                                    "(%d vertices so far)",
                                    path, line, v, nv);
                }
                if (k < 3)
                    idx[k] = (int)i;
                else
                    idx[1] = idx[2], idx[2] = (int)i; /* fan: (first, previous, this) */
                k++;
                if (k >= 3) {
                    if (nf == cap) {
                        cap = cap ? 2 * cap : 1024;
                        int *nfc = mlc_realloc(faces, (size_t)cap * 3 * sizeof *faces);
                        if (!nfc) {
                            mlc_free(faces);
                            return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
                        }
                        faces = nfc;
                    }
                    memcpy(faces + 3 * (size_t)nf, idx, sizeof idx);
                    nf++;
                }
            }
            if (k < 3) {
                mlc_free(faces);
                return mlc_errf(err, MLC_EPARSE, "%s:%d: a face needs at least 3 vertices", path,
                                line);
            }
        }
        if (!eol) break;
        p = eol + 1;
    }
    if (nv == 0 || nf == 0) {
        mlc_free(faces);
        return mlc_errf(err, MLC_EPARSE, "%s: no %s (is it the surface.obj of a run?)", path,
                        nv == 0 ? "vertices" : "faces");
    }
    *nv_out = nv;
    *nf_out = nf;
    *faces_out = faces;
    return MLC_OK;
}

/* Parse a CSV with a header line, keeping the columns named in `want` (ncol of them, all
 * required) as doubles, ncol per row. */
static mlc_status parse_csv(const char *path, char *text, const char *const *want, int ncol,
                            int *nrows, double **rows, mlc_err *err) {
    *nrows = 0;
    *rows = NULL;
    int col[8], header_cols = 0;
    for (int k = 0; k < ncol; k++)
        col[k] = -1;
    char *p = text, *eol = strchr(p, '\n');
    if (eol) *eol = 0;
    for (char *tok = p;; header_cols++) {
        char *comma = strchr(tok, ',');
        size_t len = comma ? (size_t)(comma - tok) : strcspn(tok, "\r");
        for (int k = 0; k < ncol; k++)
            if (strlen(want[k]) == len && strncmp(tok, want[k], len) == 0) col[k] = header_cols;
        if (!comma) break;
        tok = comma + 1;
    }
    for (int k = 0; k < ncol; k++)
        if (col[k] < 0)
            return mlc_errf(err, MLC_EPARSE, "%s:1: no column '%s' in the header", path, want[k]);
    int n = 0, cap = 0, line = 1;
    double *out = NULL;
    while (eol) {
        p = eol + 1;
        eol = strchr(p, '\n');
        if (eol) *eol = 0;
        line++;
        if (p[strspn(p, " \t\r")] == 0) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 512;
            double *no = mlc_realloc(out, (size_t)cap * ncol * sizeof *out);
            if (!no) {
                mlc_free(out);
                return mlc_errf(err, MLC_ENOMEM, "%s: out of memory", path);
            }
            out = no;
        }
        int c = 0, found = 0;
        for (char *tok = p;; c++) {
            for (int k = 0; k < ncol; k++)
                if (col[k] == c) {
                    char *end;
                    out[(size_t)n * ncol + k] = strtod(tok, &end);
                    if (end == tok) {
                        mlc_free(out);
                        return mlc_errf(err, MLC_EPARSE, "%s:%d: column '%s' is not a number", path,
                                        line, want[k]);
                    }
                    found++;
                }
            char *comma = strchr(tok, ',');
            if (!comma) break;
            tok = comma + 1;
        }
        if (found != ncol) {
            mlc_free(out);
            return mlc_errf(err, MLC_EPARSE, "%s:%d: %d fields, the header has %d", path, line,
                            c + 1, header_cols + 1);
        }
        n++;
    }
    *nrows = n;
    *rows = out;
    return MLC_OK;
}

static double json_number(const cJSON *root, const char *group, const char *key, double dflt) {
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(root, group);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, key);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

void mlc_run_free(mlc_run *run) {
    mlc_free(run->dir);
    mlc_free(run->faces);
    mlc_free(run->xyz);
    mlc_free(run->traj);
    mlc_free(run->hist);
    mlc_free(run->config_json);
    mlc_free(run->params_json);
    mlc_free(run->result_json);
    memset(run, 0, sizeof *run);
}

mlc_status mlc_run_load(const char *dir, mlc_run *run, mlc_err *err) {
    memset(run, 0, sizeof *run);
    struct stat st;
    if (stat(dir, &st) != 0)
        return mlc_errf(err, MLC_EINVAL,
                        "%s: %s (expected the output directory of "
                        "`modalloco optimize` or `modalloco simulate`)",
                        dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return mlc_errf(err, MLC_EINVAL,
                        "%s is not a directory (expected the output directory "
                        "of `modalloco optimize` or `modalloco simulate`)",
                        dir);
    size_t plen = strlen(dir) + 32;
    char *path = mlc_malloc(plen);
    run->dir = mlc_strdup(dir);
    if (!path || !run->dir) {
        mlc_free(path);
        mlc_run_free(run);
        return mlc_errf(err, MLC_ENOMEM, "out of memory");
    }
    mlc_status s = MLC_OK;
    char *text = NULL;
    int missing = 0;
    static const char *const required[2] = {"surface.obj", "animation.pc2"};
    for (int k = 0; k < 2; k++) {
        mlc_path_join(path, plen, dir, required[k]);
        if (stat(path, &st) != 0) {
            s = mlc_errf(err, MLC_EINVAL,
                         "%s is not a run directory: %s is missing (it is "
                         "written by `modalloco optimize` and `modalloco simulate`)",
                         dir, required[k]);
            goto fail;
        }
    }

    mlc_path_join(path, plen, dir, "surface.obj");
    if ((s = slurp(path, &text, NULL, NULL, err)) != MLC_OK) goto fail;
    int nobj = 0;
    s = parse_obj(path, text, &nobj, &run->faces, &run->nf, err);
    mlc_free(text);
    text = NULL;
    if (s != MLC_OK) goto fail;

    mlc_path_join(path, plen, dir, "animation.pc2");
    if ((s = mlc_pc2_read(path, &run->nv, &run->nframes, NULL, NULL, &run->xyz, err)) != MLC_OK)
        goto fail;
    if (run->nv != nobj || run->nframes < 1) {
        s = run->nframes < 1 ? mlc_errf(err, MLC_EPARSE, "%s: the point cache holds no frame", path)
                             : mlc_errf(err, MLC_EPARSE,
                                        "%s has %d points but surface.obj has %d vertices "
                                        "(files of different runs?)",
                                        path, run->nv, nobj);
        goto fail;
    }

    run->frame_dt = MLC_SIM_DEFAULT_DT;
    run->traj_per_frame = 1;
    static const char *const json_names[3] = {"config.json", "params.json", "result.json"};
    char **json_text[3] = {&run->config_json, &run->params_json, &run->result_json};
    for (int k = 0; k < 3; k++) {
        mlc_path_join(path, plen, dir, json_names[k]);
        if ((s = slurp(path, json_text[k], NULL, &missing, err)) != MLC_OK) goto fail;
    }
    if (run->config_json) {
        /* Only the timing and the ground are needed here; the page shows the rest. A config
         * that does not parse leaves the defaults (the page notes it). */
        cJSON *root = cJSON_Parse(run->config_json);
        if (root) {
            double dt = json_number(root, "sim", "dt", MLC_SIM_DEFAULT_DT);
            double every = json_number(root, "output", "every", 1);
            if (dt > 0 && every >= 1 && every < 1e6) {
                run->traj_per_frame = (int)every;
                run->frame_dt = dt * every;
            }
            run->ground_y = json_number(root, "contact", "ground_height", 0);
            cJSON_Delete(root);
        }
    }

    mlc_path_join(path, plen, dir, "trajectory.csv");
    if ((s = slurp(path, &text, NULL, &missing, err)) != MLC_OK) goto fail;
    if (text) {
        static const char *const cols[4] = {"time", "com_x", "com_y", "com_z"};
        s = parse_csv(path, text, cols, 4, &run->ntraj, &run->traj, err);
        mlc_free(text);
        text = NULL;
        if (s != MLC_OK) goto fail;
    }
    mlc_path_join(path, plen, dir, "history.csv");
    if ((s = slurp(path, &text, NULL, &missing, err)) != MLC_OK) goto fail;
    if (text) {
        static const char *const cols[3] = {"generation", "best_J", "median_J"};
        s = parse_csv(path, text, cols, 3, &run->nhist, &run->hist, err);
        mlc_free(text);
        text = NULL;
        if (s != MLC_OK) goto fail;
    }
    mlc_free(path);
    return MLC_OK;
fail:
    mlc_free(text);
    mlc_free(path);
    mlc_run_free(run);
    return s;
}

/* ---- Writing --------------------------------------------------------------------------------- */

/* Buffered base64 writer that splits its output into <script> parts of at most PART_CHARS
 * characters, each holding whole 3-byte groups so that the parts decode independently. */
enum { PART_CHARS = 4 << 20, OUTBUF = 1 << 16 };
typedef struct b64w {
    FILE *fp;
    const char *cls;
    unsigned char in[3];
    int nin;
    char out[OUTBUF];
    size_t nout;
    size_t part;  /* characters in the open part */
    size_t total; /* characters written */
    int open;
} b64w;

static const char b64chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_flush_out(b64w *w) {
    if (w->nout) fwrite(w->out, 1, w->nout, w->fp);
    w->nout = 0;
}
static void b64_open(b64w *w) {
    b64_flush_out(w);
    fprintf(w->fp, "<script type=\"application/octet-stream\" class=\"%s\">", w->cls);
    w->open = 1;
    w->part = 0;
}
static void b64_close(b64w *w) {
    b64_flush_out(w);
    fputs("</script>\n", w->fp);
    w->open = 0;
}
static void b64_group(b64w *w, int n) {
    if (!w->open) b64_open(w);
    if (w->nout + 4 > OUTBUF) b64_flush_out(w);
    uint32_t v = (uint32_t)w->in[0] << 16 | (uint32_t)(n > 1 ? w->in[1] : 0) << 8 |
                 (uint32_t)(n > 2 ? w->in[2] : 0);
    char *o = w->out + w->nout;
    o[0] = b64chars[v >> 18];
    o[1] = b64chars[(v >> 12) & 63];
    o[2] = n > 1 ? b64chars[(v >> 6) & 63] : '=';
    o[3] = n > 2 ? b64chars[v & 63] : '=';
    w->nout += 4;
    w->part += 4;
    w->total += 4;
    w->nin = 0;
    if (w->part >= PART_CHARS) b64_close(w);
}
static void b64_put(b64w *w, const void *data, size_t n) {
    const unsigned char *d = data;
    for (size_t i = 0; i < n; i++) {
        w->in[w->nin++] = d[i];
        if (w->nin == 3) b64_group(w, 3);
    }
}
static void b64_end(b64w *w) {
    if (w->nin) b64_group(w, w->nin);
    if (!w->open && w->total == 0) b64_open(w); /* an empty part still marks the data */
    if (w->open) b64_close(w);
}

static size_t b64_len(size_t bytes) {
    return 4 * ((bytes + 2) / 3);
}

static void put_le32(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

/* JSON string with '<' escaped too, so no "</script>" can end the element early. */
static void json_string(FILE *fp, const char *s) {
    fputc('"', fp);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(fp, "\\%c", *p);
        else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
            fprintf(fp, "\\u%04x", *p);
        else
            fputc(*p, fp);
    }
    fputc('"', fp);
}
static void json_num(FILE *fp, double v) {
    if (isfinite(v))
        fprintf(fp, "%.9g", v);
    else
        fputs("null", fp);
}
static void json_vec3(FILE *fp, const double v[3]) {
    fputc('[', fp);
    for (int k = 0; k < 3; k++) {
        if (k) fputc(',', fp);
        json_num(fp, v[k]);
    }
    fputc(']', fp);
}

/* A JSON file as it is, inside a <script type="application/json">; '<' becomes \u003c (valid
 * inside JSON strings, the only place a well-formed file can have it). */
static void embed_json(FILE *fp, const char *id, const char *text) {
    if (!text) return;
    fprintf(fp, "<script type=\"application/json\" id=\"%s\">", id);
    for (const char *p = text; *p; p++) {
        if (*p == '<')
            fputs("\\u003c", fp);
        else
            fputc(*p, fp);
    }
    fputs("</script>\n", fp);
}

static void bbox(const float *xyz, size_t npts, double lo[3], double hi[3]) {
    for (int k = 0; k < 3; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    for (size_t i = 0; i < npts; i++)
        for (int k = 0; k < 3; k++) {
            double v = (double)xyz[3 * i + k];
            if (isfinite(v)) {
                if (v < lo[k]) lo[k] = v;
                if (v > hi[k]) hi[k] = v;
            }
        }
    for (int k = 0; k < 3; k++)
        if (!(lo[k] <= hi[k])) lo[k] = hi[k] = 0; /* no finite value at all */
}

mlc_status mlc_view_html_write(const mlc_run *run, const char *path, size_t max_data,
                               mlc_view_html_info *info, mlc_err *err) {
    mlc_view_html_info inf;
    memset(&inf, 0, sizeof inf);
    const size_t nv = (size_t)run->nv, nframes = (size_t)run->nframes;
    if (nv == 0 || nframes == 0 || run->nf < 1)
        return mlc_errf(err, MLC_EINVAL, "%s: nothing to view (empty surface or animation)", path);
    /* Choose the encoding: float32 if it fits, else int16 over the bounding box, else also
     * every step-th frame. Sizes are base64 characters of faces + positions. */
    size_t face_chars = b64_len(12 * (size_t)run->nf);
    int step = 1, quant = 0;
    if (face_chars + b64_len(12 * nv * nframes) > max_data) {
        quant = 1;
        while ((size_t)step < nframes &&
               face_chars + b64_len(6 * nv * ((nframes + step - 1) / step)) > max_data)
            step++;
    }
    size_t nshow = (nframes + step - 1) / step;

    double lo[3], hi[3], lo0[3], hi0[3], c[3], h[3];
    bbox(run->xyz, nv, lo0, hi0);
    for (int k = 0; k < 3; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    for (size_t f = 0; f < nframes; f += step) {
        double l[3], u[3];
        bbox(run->xyz + 3 * nv * f, nv, l, u);
        for (int k = 0; k < 3; k++)
            lo[k] = fmin(lo[k], l[k]), hi[k] = fmax(hi[k], u[k]);
    }
    for (int k = 0; k < 3; k++) {
        c[k] = 0.5 * (lo[k] + hi[k]);
        h[k] = fmax(0.5 * (hi[k] - lo[k]), 1e-12);
    }

    mlc_afile af = {0};
    mlc_status s = mlc_afile_open(&af, path, err);
    if (s != MLC_OK) return s;
    FILE *fp = af.fp;
    for (size_t i = 0; i < sizeof page_head / sizeof *page_head; i++)
        fputs(page_head[i], fp);

    /* Metadata, trajectory, history, notes. */
    fputs("<script type=\"application/json\" id=\"meta\">{\"dir\":", fp);
    json_string(fp, run->dir ? run->dir : "");
    fprintf(fp,
            ",\"version\":\"%s\",\"nv\":%d,\"nf\":%d,\"frames\":%zu,\"framesTotal\":%d,"
            "\"step\":%d,\"frameDt\":",
            MLC_VERSION, run->nv, run->nf, nshow, run->nframes, step * run->traj_per_frame);
    json_num(fp, run->frame_dt * step);
    fprintf(fp, ",\"trajPerFrame\":%d,\"enc\":\"%s\",\"ground\":", run->traj_per_frame * step,
            quant ? "i16" : "f32");
    json_num(fp, run->ground_y);
    fputs(",\"lo\":", fp);
    json_vec3(fp, lo);
    fputs(",\"hi\":", fp);
    json_vec3(fp, hi);
    fputs(",\"lo0\":", fp);
    json_vec3(fp, lo0);
    fputs(",\"hi0\":", fp);
    json_vec3(fp, hi0);
    fputs(",\"c\":", fp);
    json_vec3(fp, c);
    fputs(",\"h\":", fp);
    json_vec3(fp, h);
    fputs(",\"traj\":[", fp);
    for (int i = 0; i < run->ntraj; i++)
        for (int k = 1; k < 4; k++) {
            if (i || k > 1) fputc(',', fp);
            double v = run->traj[4 * i + k];
            if (isfinite(v))
                fprintf(fp, "%.7g", v);
            else
                fputs("null", fp);
        }
    fputs("],\"hist\":[", fp);
    for (int i = 0; i < run->nhist; i++) {
        fputs(i ? ",[" : "[", fp);
        for (int k = 0; k < 3; k++) {
            if (k) fputc(',', fp);
            json_num(fp, run->hist[3 * i + k]);
        }
        fputc(']', fp);
    }
    fputs("],\"notes\":[", fp);
    char buf[512];
    double mb = (double)max_data / (1 << 20);
    if (quant) {
        double res = 2 * fmax(h[0], fmax(h[1], h[2])) / 65534;
        snprintf(buf, sizeof buf,
                 "Positions are quantized to 16 bits over the bounding box of "
                 "the motion (resolution %.3g mm) instead of float32, to keep the embedded data "
                 "under %.0f MB.",
                 1000 * res, mb);
    } else {
        snprintf(buf, sizeof buf,
                 "Positions are embedded as float32, exactly as in "
                 "animation.pc2.");
    }
    json_string(fp, buf);
    if (step > 1) {
        snprintf(buf, sizeof buf,
                 "Only one frame in %d of the %d in animation.pc2 is "
                 "embedded (%zu frames) to keep the data under %.0f MB; playback speed is "
                 "unchanged.",
                 step, run->nframes, nshow, mb);
        fputc(',', fp);
        json_string(fp, buf);
    }
    size_t data_chars = face_chars + b64_len((quant ? 6 : 12) * nv * nshow);
    snprintf(buf, sizeof buf,
             "%d surface vertices, %d triangles, %zu frames (%.1f MB of "
             "embedded data).",
             run->nv, run->nf, nshow, (double)data_chars / (1 << 20));
    fputc(',', fp);
    json_string(fp, buf);
    if (run->ntraj == 0) {
        fputc(',', fp);
        json_string(fp, "No trajectory.csv: the centre-of-mass path is not drawn.");
    }
    fputs("]}</script>\n", fp);
    embed_json(fp, "config", run->config_json);
    embed_json(fp, "params", run->params_json);
    embed_json(fp, "result", run->result_json);

    /* Faces as little-endian uint32, then positions. */
    b64w w;
    memset(&w, 0, sizeof w);
    w.fp = fp;
    w.cls = "mlc-faces";
    for (int t = 0; t < 3 * run->nf; t++) {
        unsigned char q[4];
        put_le32(q, (uint32_t)run->faces[t]);
        b64_put(&w, q, 4);
    }
    b64_end(&w);
    memset(&w, 0, sizeof w);
    w.fp = fp;
    w.cls = "mlc-pos";
    for (size_t f = 0; f < nframes; f += step) {
        const float *x = run->xyz + 3 * nv * f;
        for (size_t i = 0; i < 3 * nv; i++) {
            if (quant) {
                double v = ((double)x[i] - c[i % 3]) / h[i % 3] * 32767.0;
                long q = isfinite(v) ? lrint(fmax(-32767.0, fmin(32767.0, v))) : 0;
                uint16_t u = (uint16_t)(int16_t)q;
                unsigned char b[2] = {(unsigned char)u, (unsigned char)(u >> 8)};
                b64_put(&w, b, 2);
            } else {
                uint32_t u;
                memcpy(&u, &x[i], 4);
                unsigned char b[4];
                put_le32(b, u);
                b64_put(&w, b, 4);
            }
        }
    }
    b64_end(&w);

    for (size_t i = 0; i < sizeof page_tail / sizeof *page_tail; i++)
        fputs(page_tail[i], fp);
    long size = ftell(fp);
    if ((s = mlc_afile_commit(&af, err)) != MLC_OK) return s;
    inf.bytes = size > 0 ? (size_t)size : 0;
    inf.data_bytes = data_chars;
    inf.frames = (int)nshow;
    inf.step = step;
    inf.quantized = quant;
    if (info) *info = inf;
    return MLC_OK;
}
