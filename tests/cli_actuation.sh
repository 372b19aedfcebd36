#!/usr/bin/env bash
# cli_actuation.sh BIN SRCDIR: actuation strength and ramp from the command line.
#  - simulate runs any physically valid parameters and only warns (stderr, exit 0) when they
#    lie outside the optimizer's search box: per-signal limits, the combined bound
#    (actuation.amplitude_bound), period and phase ranges; invalid ones (period <= 0) exit 2;
#  - actuation.ramp is part of the configuration that params.json carries, so a replay of an
#    optimized gait reproduces the optimizer's rollout exactly, and it changes the rollout;
#  - the new keys are range-checked with messages that name them.
. "$(dirname "$0")/lib_cli.sh" "$@"
MESH=$SRC/data/quadruped.mesh

check "modes" 0 "$BIN" modes "$MESH" --out "$T/modes" --set actuation.modes=2
lim=$(tr -d '\n' < "$T/modes/modes.json" | sed -n 's/.*"amplitude_limits":[[:space:]]*\[\([^]]*\)\].*/\1/p')
a0=$(echo "$lim" | awk -F, '{printf "%.15g", 0.999*$1}')
a1=$(echo "$lim" | awk -F, '{printf "%.15g", 0.999*$2}')
[ -n "$a0" ] && [ -n "$a1" ] || fail "modes.json amplitude_limits"
gait() { # gait FILE A0 A1 PERIOD PHASE
  cat > "$1" <<JSON
{"mesh": {"path": "$MESH"}, "sim": {"steps": 40}, "actuation": {"modes": 2, "parameters": [
 {"mode": 0, "sinusoids": [{"amplitude": $2, "period": $4, "phase": $5}]},
 {"mode": 1, "sinusoids": [{"amplitude": $3, "period": 0.3, "phase": 0}]}]}}
JSON
}
gait "$T/one.json" "$a0" 0 0.3 0.1
check "one mode at its limit" 0 "$BIN" simulate "$T/one.json" --out "$T/s1"
grep -q "outside the optimizer's search box" "$T/err" && fail "one mode at its limit drew a warning" || ok "no warning inside the box"
gait "$T/two.json" "$a0" "$a1" 0.3 0.1
check "two modes at their limits" 0 "$BIN" simulate "$T/two.json" --out "$T/s2" \
  --set actuation.amplitude_bound=combined
grep_err "combined bound warns" "combined actuation may reach strain"
check "... per_signal accepts them" 0 "$BIN" simulate "$T/two.json" --out "$T/s3" \
  --set actuation.amplitude_bound=per_signal
grep -q "outside" "$T/err" && fail "per_signal warned" || ok "per_signal: no warning"
gait "$T/period.json" "$a0" 0 0.9 0.1
check "period outside the range" 0 "$BIN" simulate "$T/period.json" --out "$T/s4"
grep_err "names the period range" "actuation.period_range"
gait "$T/phase.json" "$a0" 0 0.3 5
check "phase outside the range" 0 "$BIN" simulate "$T/phase.json" --out "$T/s5"
grep_err "names the phase range" "actuation.phase_range"
gait "$T/zero.json" "$a0" 0 0 0.1
check "period 0 is invalid" 2 "$BIN" simulate "$T/zero.json" --out "$T/s6"
grep_err "names the parameter" "period"

check "negative ramp" 2 "$BIN" simulate "$MESH" --set actuation.ramp=-1 --out "$T/x"
grep_err "names actuation.ramp" "actuation.ramp"
check "unknown amplitude bound" 2 "$BIN" simulate "$MESH" --set actuation.amplitude_bound=sum --out "$T/x"
grep_err "names actuation.amplitude_bound" "actuation.amplitude_bound"

# Ramp: optimize with it, replay params.json: the same rollout to the last bit.
check "optimize with a ramp" 0 "$BIN" optimize "$MESH" --out "$T/run" --quiet --set actuation.ramp=0.3 \
  --set actuation.modes=3 --set cmaes.generations=2 --set cmaes.population=4 --set sim.steps=60
grep -q '"ramp":[[:space:]]*0.3' "$T/run/params.json" && ok "params.json holds the ramp" || fail "params.json lacks the ramp"
check "replay matches" 0 "$BIN" simulate "$T/run/params.json" --out "$T/replay" --expect "$T/run/result.json"
check "without the ramp it differs" 1 "$BIN" simulate "$T/run/params.json" --out "$T/replay0" \
  --set actuation.ramp=0 --expect "$T/run/result.json"
finish
