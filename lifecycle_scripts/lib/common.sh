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
  if [[ -f "$file" ]]; then
    # shellcheck source=/dev/null
    source "$file" || die "cannot read settings from $file"
    log "settings from $(basename "$file"): MOVE_DATA_ROOTS=$MOVE_DATA_ROOTS EXTRA_PACKAGES='$EXTRA_PACKAGES'"
  else
    log "no $(basename "$file"): default settings"
  fi
  export MOVE_DATA_ROOTS EXTRA_PACKAGES
}

run_step() {
  local name="$1" script="$2"
  [[ -f "$script" ]] || die "step '$name': $script is missing (upload every file of lifecycle_scripts/)"
  log "step '$name': start"
  bash "$script" || die "step '$name' failed (exit $?); its output is above"
  log "step '$name': done"
}
