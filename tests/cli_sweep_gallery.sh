#!/usr/bin/env bash
# cli_sweep_gallery.sh BIN SRCDIR: a sweep of 2 settings x 3 seeds run 2 at a time
# (`sweep --jobs 2`), then `summarize --gallery`: the grouped CSV (2 groups of n = 3, their
# median, min and max recomputed from the per-run CSV), the plot of J by setting (well-formed
# XML, a dot per run, a median per group), `--json` documents that parse, and ROOT/index.html
# loaded in headless Chromium (every image shown, nothing loaded from the network, no
# JavaScript error). Also: --jobs errors, a failing run among parallel ones, and Ctrl-C.
# Exit 77 (skipped) when everything else passed but Chromium is not installed.
. "$(dirname "$0")/lib_cli.sh" "$@"
export OPENBLAS_NUM_THREADS=1
cd "$T" || exit 1
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
cat > sweep.json <<'JSON'
{"base": {"sim": {"steps": 80}, "cmaes": {"population": 6, "generations": 2},
          "actuation": {"modes": 3}, "reference": {"rerank": 0}},
 "grid": {"actuation.sinusoids": [1, 2]},
 "seeds": [1, 2, 3],
 "args": ["parallel.threads=1"]}
JSON

# ---- sweep --dry-run --json: one document, nothing else on stdout ----
"$BIN" sweep sweep.json --out root --dry-run --json >dry.json 2>dry.err || fail "sweep --dry-run --json"
python3 - <<'PY' && ok "--dry-run --json: 6 runs with their settings and directories" || fail "--dry-run --json: $(head -c 300 dry.json)"
import json
d = json.load(open("dry.json"))
runs = d["runs"]
assert len(runs) == 6 and d["keys"] == ["actuation.sinusoids"]
for i, r in enumerate(runs):
    assert r["run"] == i and r["dir"].endswith("root/run_%04d" % i) and r["state"] == "todo"
    assert r["settings"] == {"actuation.sinusoids": 1 + i // 3} and r["seed"] == 1 + i % 3
    assert r["command"][0] == "optimize" and "--out" in r["command"]
PY
[ ! -e root ] && ok "--dry-run --json writes nothing" || fail "--dry-run --json wrote root"

# ---- Usage errors: exit 2 before anything is written ----
for bad in "--jobs 0" "--jobs -1" "--jobs two" "--json" "--jobs 2 --slurm job.sh" "--slurm-max-running 4" \
           "--slurm job.sh --slurm-max-running 0"; do
  # shellcheck disable=SC2086
  "$BIN" sweep sweep.json --out badroot $bad >/dev/null 2>bad.err
  code=$?
  if [ $code -eq 2 ] && [ ! -e badroot ] && [ ! -e job.sh ] && grep -q "modalloco" bad.err; then
    ok "sweep $bad refused: $(head -1 bad.err | cut -c1-100)"
  else
    fail "sweep $bad: exit $code, $(cat bad.err)"
  fi
done

# ---- sweep --jobs 2 ----
"$BIN" sweep sweep.json --out root --jobs 2 >jobs.out 2>jobs.err || { fail "sweep --jobs 2"; cat jobs.err; }
n=0
for i in 0 1 2 3 4 5; do [ -s "root/run_000$i/params.json" ] && grep -q "^modalloco sweep: run $((i + 1))/6" "root/run_000$i/optimize.log" && n=$((n + 1)); done
[ "$n" -eq 6 ] && ok "--jobs 2: 6 runs complete, each with its log" || { fail "--jobs 2: $n of 6 runs with params.json and log"; cat jobs.err; }
[ ! -s jobs.out ] && ok "--jobs 2: the runs' output goes to their logs" || fail "--jobs 2 printed on stdout: $(head -3 jobs.out)"
grep -q "6 runs: 6 ran (0 failed" jobs.err && ok "--jobs 2: the last line counts the runs" || fail "sweep summary line: $(tail -2 jobs.err)"

# ---- summarize --gallery ----
"$BIN" summarize root --gallery >table.txt 2>sum.err || { fail "summarize --gallery"; cat sum.err; }
for f in summary.csv summary.svg summary_groups.csv summary_by_setting.svg index.html; do
  [ -s "root/$f" ] || fail "summarize --gallery did not write root/$f"
done
for i in 0 1 2 3 4 5; do [ -s "root/run_000$i/strip.png" ] || fail "no film strip for run $i"; done
python3 - <<'PY' && ok "summary_groups.csv: 2 groups of n = 3, median/min/max of the runs' J" || fail "grouped CSV: $(cat root/summary_groups.csv)"
import csv, statistics
runs = list(csv.DictReader(open("root/summary.csv")))
groups = list(csv.DictReader(open("root/summary_groups.csv")))
assert len(runs) == 6 and len(groups) == 2, (len(runs), len(groups))
for g in groups:
    js = [float(r["J"]) for r in runs if r["actuation.sinusoids"] == g["actuation.sinusoids"]]
    assert int(g["n"]) == 3 and int(g["done"]) == 3 and len(js) == 3
    assert float(g["J_median"]) == statistics.median(js)
    assert float(g["J_min"]) == min(js) and float(g["J_max"]) == max(js)
    assert int(g["credible_n"]) == 3 and 0 <= int(g["credible_k"]) <= 3
    assert int(g["robust_n"]) == 3 and int(g["transfer_n"]) == 0
assert [g["actuation.sinusoids"] for g in groups] == ["1", "2"]
assert "cmaes.seed" not in groups[0]
PY
python3 - <<'PY' && ok "summary_by_setting.svg: well-formed, a dot per run and a median per group" || fail "summary_by_setting.svg"
import xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse("root/summary_by_setting.svg").getroot()
panels = root.findall(".//s:g[@class='panel']", ns)
assert len(panels) == 1, len(panels)
dots = panels[0].findall("s:circle", ns)
medians = [l for l in panels[0].findall("s:line", ns) if "median J" in (l.findtext("s:title", "", ns))]
assert len(dots) == 6 and len(medians) == 2, (len(dots), len(medians))
assert all(("credible" in d.findtext("s:title", "", ns)) for d in dots)
ET.parse("root/summary.svg")
PY
grep -q "^group  actuation.sinusoids  n  J median" table.txt && [ "$(wc -l < table.txt)" -eq 3 ] \
  && ok "summarize prints the groups as a table" || fail "table: $(cat table.txt)"

# The travel kept in a second model: result.json "transfer" (run 0) or fullspace.json (run 1);
# group 1's median is over those two, group 2 has none.
python3 - <<'PY'
import json
p = "root/run_0000/result.json"
d = json.load(open(p)); d["transfer"] = {"model": "fullspace", "displacement": 0.05, "fraction": 0.5}
json.dump(d, open(p, "w"))
json.dump({"reduced": {"displacement": 0.2}, "full": {"displacement": 0.18}}, open("root/run_0001/fullspace.json", "w"))
PY
"$BIN" summarize root --out root/summary.csv >/dev/null 2>&1 || fail "summarize after adding the transfer"
python3 - <<'PY' && ok "full-space travel kept: the median of the runs that have it" || fail "transfer: $(cat root/summary_groups.csv)"
import csv
g = list(csv.DictReader(open("root/summary_groups.csv")))
assert g[0]["transfer_n"] == "2" and abs(float(g[0]["transfer_median"]) - 0.7) < 1e-9, g[0]
assert g[1]["transfer_n"] == "0" and g[1]["transfer_median"] == ""
PY

# --json: one document, groups and runs, and the same numbers as the CSV.
"$BIN" summarize root --json >sum.json 2>/dev/null || fail "summarize --json"
python3 - <<'PY' && ok "summarize --json: groups and runs" || fail "summarize --json: $(head -c 300 sum.json)"
import json, csv
d = json.load(open("sum.json"))
assert [g["n"] for g in d["groups"]] == [3, 3] and len(d["runs"]) == 6
rows = list(csv.DictReader(open("root/summary_groups.csv")))
for g, row in zip(d["groups"], rows):
    assert abs(g["J_median"] - float(row["J_median"])) <= 1e-12 * max(1, abs(g["J_median"]))
    assert g["credible"]["n"] == 3 and g["setting"] == {"actuation.sinusoids": int(row["actuation.sinusoids"])}
    assert len(g["runs"]) == 3
assert all(r["status"] == "done" and r["group"] in (1, 2) for r in d["runs"])
PY
# Without --out the per-run CSV stays on stdout, for the scripts that read it.
[ "$("$BIN" summarize root | wc -l)" -eq 7 ] && ok "summarize without --out: the per-run CSV" || fail "summarize stdout"
"$BIN" summarize root root/run_0000 --gallery >/dev/null 2>gal.err
[ $? -eq 2 ] && grep -q "one sweep root" gal.err && ok "--gallery with two directories refused" || fail "--gallery of two: $(cat gal.err)"
# A second gallery keeps the strips that are newer than their animation.
"$BIN" summarize root --gallery >/dev/null 2>again.err && grep -q "0 film strips made, 6 kept" again.err \
  && ok "a second gallery keeps the strips" || fail "second gallery: $(cat again.err)"

# ---- A failing run among parallel ones: the others finish, the sweep exits 1 ----
printf 'OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n' > tiny.off
cat > failing.json <<'JSON'
{"base": {"sim": {"steps": 40}, "cmaes": {"population": 4, "generations": 1}, "actuation": {"modes": 2}},
 "list": [{"mesh.path": "tiny.off"}, {"sim.steps": 40}], "args": ["parallel.threads=1"]}
JSON
"$BIN" sweep failing.json --out froot --jobs 2 >/dev/null 2>fail.err
code=$?
if [ $code -eq 1 ] && [ -s froot/run_0001/params.json ] && [ ! -e froot/run_0000/params.json ] \
  && grep -q "run 0 (.*froot/run_0000) failed (exit 2); its log: .*optimize.log" fail.err \
  && grep -q "closed surface needs" froot/run_0000/optimize.log; then
  ok "a failing run: the other finishes, the sweep exits 1 and names the log"
else
  fail "failing run: exit $code, $(cat fail.err)"
fi

# ---- SIGINT: the runs save a checkpoint, the sweep exits 130, the same command continues ----
cat > long.json <<'JSON'
{"base": {"sim": {"steps": 300}, "cmaes": {"population": 8, "generations": 400}, "actuation": {"modes": 4}},
 "seeds": [1, 2], "args": ["parallel.threads=1"]}
JSON
# both_running ROOT: wait until runs 0 and 1 of ROOT have each finished a generation.
both_running() {
  local a b
  for _ in $(seq 1 1200); do
    a=$(wc -l 2>/dev/null < "$1/run_0000/history.csv")
    b=$(wc -l 2>/dev/null < "$1/run_0001/history.csv")
    [ "${a:-0}" -ge 2 ] && [ "${b:-0}" -ge 2 ] && return 0
    sleep 0.05
  done
}
"$BIN" sweep long.json --out iroot --jobs 2 >/dev/null 2>int.err &
pid=$!
both_running iroot
kill -INT $pid 2>/dev/null
wait $pid
code=$?
left=$(pgrep -f "optimize .*$T/iroot" | wc -l)
if [ $code -eq 130 ] && [ "$left" -eq 0 ] && [ -f iroot/run_0000/checkpoint.bin ] && [ -f iroot/run_0001/checkpoint.bin ] \
  && [ ! -e iroot/run_0000/params.json ] && grep -q "interrupted" int.err; then
  ok "SIGINT: both runs saved a checkpoint, none left running, exit 130"
  "$BIN" sweep long.json --out iroot --dry-run > idry.txt
  [ "$(grep -c "^resume" idry.txt)" -eq 2 ] && ok "the interrupted runs resume" || fail "after SIGINT: $(cat idry.txt)"
else
  fail "SIGINT: exit $code, $left runs left, $(tail -3 int.err)"
  for p in $(pgrep -f "optimize .*$T/iroot"); do kill -INT "$p"; done
fi

# Ctrl-C in a terminal reaches the whole process group: the sweep and its runs at once.
setsid "$BIN" sweep long.json --out groot --jobs 2 >/dev/null 2>gint.err &
gpid=$!
both_running groot
kill -INT -- -"$gpid" 2>/dev/null
wait $gpid
code=$?
left=$(pgrep -f "optimize .*$T/groot" | wc -l)
if [ $code -eq 130 ] && [ "$left" -eq 0 ] && [ -f groot/run_0000/checkpoint.bin ] && [ -f groot/run_0001/checkpoint.bin ]; then
  ok "Ctrl-C to the process group: checkpoints saved, none left running, exit 130"
else
  fail "Ctrl-C to the group: exit $code, $left runs left, $(tail -3 gint.err)"
  for p in $(pgrep -f "optimize .*$T/groot"); do kill -INT "$p"; done
fi

# ---- The gallery in a browser ----
CHROME=""
for c in /usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome; do
  [ -x "$c" ] && { CHROME=$c; break; }
done
if [ -z "$CHROME" ]; then
  echo "SKIP: chromium not installed (index.html not loaded in a browser)"
  [ "$fails" -eq 0 ] && exit 77
  finish
fi
timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$(mktemp -d -p "$T")" --enable-logging=stderr --v=0 \
  --virtual-time-budget=10000 --dump-dom "file://$T/root/index.html" >dom.html 2>chrome.err
BODY=$(grep -o '<body[^>]*>' dom.html)
echo "$BODY" | grep -q 'data-ready="1"' && echo "$BODY" | grep -q 'data-images="8"' \
  && echo "$BODY" | grep -q 'data-broken="0"' && ok "Chromium: 6 film strips and 2 plots shown" \
  || { fail "Chromium: $BODY"; tail -5 chrome.err; }
echo "$BODY" | grep -q 'data-remote="0"' && ok "Chromium: nothing loaded from the network" || fail "Chromium: $BODY"
[ "$(grep -c 'id="group-' dom.html)" -eq 2 ] && ok "Chromium: a section per group" || fail "Chromium: group sections"
grep 'CONSOLE' chrome.err | grep -q 'Uncaught\|Error' && fail "Chromium: JavaScript errors: $(grep CONSOLE chrome.err | head -3)" \
  || ok "Chromium: no JavaScript error"
finish
