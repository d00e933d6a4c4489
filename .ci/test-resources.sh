# Sourced by .ci/run. The PostgreSQL and Redis servers are shared with other jobs: everything a run
# creates carries its run id (TEST_RUN_ID: test/helpers/backend.ts puts it in database names and Redis
# key prefixes), and only that is dropped afterwards.

ci_run_id() { printf 'ci%s' "$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')"; }

# Drops the databases and Redis keys of run $1: its admin database gh_ci_<run>, and the test helpers'
# gh_t_<run>_… and gh_cli_<run>_… databases and ght:gh_t_<run>_… / ght:gh_cli_<run>_… keys.
ci_drop_own() {
  local run=$1 d
  [[ $run =~ ^[a-z0-9]+$ ]] || { echo "ci_drop_own: bad run id: $run" >&2; return 1; }
  for d in $(psql -h 127.0.0.1 -U postgres -d postgres -Atc "SELECT datname FROM pg_database WHERE datname = 'gh_ci_${run}' OR datname LIKE 'gh\_t\_${run}\_%' OR datname LIKE 'gh\_cli\_${run}\_%'" 2>/dev/null); do
    psql -h 127.0.0.1 -U postgres -d postgres -qc "DROP DATABASE IF EXISTS \"$d\" WITH (FORCE)" >/dev/null 2>&1
  done
  local pattern
  for pattern in "ght:gh_t_${run}_*" "ght:gh_cli_${run}_*"; do
    redis-cli -h 127.0.0.1 -p 6379 --scan --pattern "$pattern" 2>/dev/null | xargs -r -n 500 redis-cli -h 127.0.0.1 -p 6379 del >/dev/null 2>&1
  done
  return 0
}
