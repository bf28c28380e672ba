# shellcheck shell=bash
# Shared by on_create.sh and its steps: logging, failing with a message, settings, steps.
# PROVISION_ROOT stands for / ; the tests point it at a temporary folder.

ROOT="${PROVISION_ROOT:-}"
LOG_DIR="$ROOT/var/log/provision"
LOG_FILE="$LOG_DIR/provisioning.log"
export LOG_DIR LOG_FILE

log() {
  printf '[%s] %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"
}

die() {
  log "ERROR: $*" >&2
  exit 1
}

# Settings the kit writes next to the scripts from the environment config (hyperpod.lifecycle).
# A missing file means the defaults; the values are exported for the steps.
load_settings() {
  local file="$1"
  MOVE_DATA_ROOTS=true
  EXTRA_PACKAGES=""
  GPU_DEVICE_ISOLATION=false
  SECCOMP_DEFAULT=true
  BLOCK_POD_IMDS=true
  if [[ -f "$file" ]]; then
    # shellcheck source=/dev/null
    source "$file" || die "cannot read settings from $file"
    log "settings from $(basename "$file"): MOVE_DATA_ROOTS=$MOVE_DATA_ROOTS EXTRA_PACKAGES='$EXTRA_PACKAGES'" \
      "GPU_DEVICE_ISOLATION=$GPU_DEVICE_ISOLATION SECCOMP_DEFAULT=$SECCOMP_DEFAULT BLOCK_POD_IMDS=$BLOCK_POD_IMDS"
  else
    log "no $(basename "$file"): default settings"
  fi
  export MOVE_DATA_ROOTS EXTRA_PACKAGES GPU_DEVICE_ISOLATION SECCOMP_DEFAULT BLOCK_POD_IMDS
}

# Print a TOML file ("-": standard input) with its top-level `key` (a bare key: letters, digits, - and _)
# set to `value` (TOML, written as given).
# The line setting it before the first [table], commented out or not, is replaced; without one, the line
# goes before the first table (after it, TOML would read the key as the table's). Keys in tables stay.
toml_with_top_level_key() {
  local file="$1" key="$2" value="$3"
  # A byte-order mark before the first line would hide a [table] header from the patterns below.
  sed '1s/^\xEF\xBB\xBF//' "$file" | awk -v key="$key" -v line="$key = $value" '
    !in_tables && /^[[:space:]]*\[/ { if (!done) print line; done = 1; in_tables = 1 }
    !in_tables && $0 ~ ("^[#[:space:]]*" key "[[:space:]]*=") { if (!done) print line; done = 1; next }
    { print }
    END { if (!done) print line }
  '
}

# Print a TOML file ("-": standard input) with `key` of the table `[table]` (a plain header, no dots or quotes
# needed in the kit's uses) set to `value`. The table's line setting it, commented out or not, is replaced;
# without one the line goes at the end of the table; without the table, the table is added at the end.
toml_with_table_key() {
  local file="$1" table="$2" key="$3" value="$4"
  sed '1s/^\xEF\xBB\xBF//' "$file" | awk -v table="[$table]" -v key="$key" -v line="$key = $value" '
    function header(text) { sub(/[[:space:]]*(#.*)?$/, "", text); sub(/^[[:space:]]*/, "", text); return text }
    /^[[:space:]]*\[/ {
      if (inside && !done) { print line; done = 1 }
      inside = (header($0) == table); seen = seen || inside
    }
    inside && !done && $0 ~ ("^[#[:space:]]*" key "[[:space:]]*=") { print line; done = 1; next }
    { print }
    END {
      if (inside && !done) print line
      else if (!seen) { print ""; print table; print line }
    }
  '
}

# Install `helper` (a file of lib/) on the node at `dest` and a kubelet.service drop-in file `drop_in` whose
# ExecStartPre is `exec_start_pre` (naming dest), written by `step`. Sets PRE_START_CHANGED=true when it wrote
# either. Every write names what failed and ends the step: called plainly (never inside $(...), `if` or `||`,
# where bash switches `set -e` off), so a drop-in that cannot be written fails the node's creation instead of
# leaving the setting for this boot only.
# shellcheck disable=SC2034 # read by the steps that source this file
PRE_START_CHANGED=false
install_kubelet_pre_start() {
  local helper="$1" dest="$2" drop_in="$3" exec_start_pre="$4" step="$5" unit
  unit="# Written by hyperpod-kit (lifecycle_scripts/steps/$step)."$'\n'"[Service]"$'\n'"ExecStartPre=$exec_start_pre"
  if ! cmp -s "$helper" "$ROOT$dest"; then
    install -D -m 0755 "$helper" "$ROOT$dest" || die "cannot install the kubelet's pre-start helper at $dest"
    # shellcheck disable=SC2034
    PRE_START_CHANGED=true
  fi
  if [[ ! -f "$ROOT$drop_in" || "$(cat "$ROOT$drop_in")" != "$unit" ]]; then
    mkdir -p "$(dirname "$ROOT$drop_in")" || die "cannot create the folder of the kubelet drop-in $drop_in"
    printf '%s\n' "$unit" > "$ROOT$drop_in" || die "cannot write the kubelet drop-in $drop_in"
    # shellcheck disable=SC2034
    PRE_START_CHANGED=true
  fi
}

# Run an installed pre-start helper now, as the kubelet's ExecStartPre will (PROVISION_ROOT: this run's root), its
# output logged: HELPER_STATUS is its exit status, HELPER_OUTPUT what it printed. Called plainly, as
# install_kubelet_pre_start is, so that the step reads the status rather than losing it.
run_pre_start_helper() {
  set +e
  HELPER_OUTPUT="$(PROVISION_ROOT="$ROOT" bash "$ROOT$1" 2>&1)"
  # shellcheck disable=SC2034 # read by the steps that source this file
  HELPER_STATUS=$?
  set -e
  [[ -z "$HELPER_OUTPUT" ]] || log "$HELPER_OUTPUT"
}

run_step() {
  local name="$1" script="$2"
  [[ -f "$script" ]] || die "step '$name': $script is missing (upload every file of lifecycle_scripts/)"
  log "step '$name': start"
  bash "$script" || die "step '$name' failed (exit $?); its output is above"
  log "step '$name': done"
}
