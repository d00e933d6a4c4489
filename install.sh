#!/usr/bin/env bash
# Gatehouse installer for Debian/Ubuntu. Prepares the host (Node check, production install, system
# user, optional PostgreSQL/Redis/nginx), then hands configuration to `gatehouse init`.
# Safe to re-run: it never deletes the data dir and init never regenerates existing secrets.
set -euo pipefail
# With bash 5.2's default, "&" in a substituted value would expand to the match; values must stay literal.
shopt -u patsub_replacement 2>/dev/null || true
umask 022

readonly MIN_NODE=20.19.0
# Supported: Node.js 22 (from 22.12) and 24 LTS. 20 reached end of life on 2026-04-30: it still runs, with a warning.
readonly SUPPORTED_NODE="22 and 24 LTS"
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
readonly SCRIPT_DIR
readonly SERVICE=gatehouse
readonly PG_ROLE=gatehouse PG_DB=gatehouse

usage() {
  cat <<'EOF'
Usage: install.sh [options]

Installs Gatehouse on a Debian/Ubuntu host (run as root), or into any directory with --no-systemd.
Needs Node.js 22 (22.12 or later) or 24 LTS; Node.js 20 (end of life) still runs, with a warning.

Locations
  --prefix DIR              install directory (default /opt/gatehouse)
  --data-dir DIR            data directory: config.json, SQLite file, outbox (default /var/lib/gatehouse)
  --source DIR              Gatehouse source tree to install (default: the directory of install.sh)
  --env-file FILE           environment file read by `gatehouse serve` and every other command, recorded
                            in DATA_DIR/config.json (default /etc/gatehouse/gatehouse.env, or
                            PREFIX/etc/gatehouse.env when the unit is not installed on this host)
  --user NAME               service user the unit runs as and, as root, owner of the data dir
                            (default gatehouse; must exist with --no-system-user)

Configuration passed to `gatehouse init`
  --port N                  TCP port (default 8787)
  --host H                  address to bind (default 127.0.0.1)
  --public-url URL          public base URL (default https://DOMAIN with --domain)
  --database-url URL        PostgreSQL URL (default: SQLite in the data dir)
  --redis-url URL           Redis URL (default: in-process cache and limits)
  --smtp-url URL            SMTP server (default: messages go to the outbox in the data dir)
  --mail-from ADDR          sender address
  --admin-email EMAIL       create the first superadmin (needs --admin-password-file)
  --admin-password-file F   file holding that admin's password

Host setup (root)
  --with-postgres           install PostgreSQL from apt, create role and database "gatehouse"
  --with-redis              install Redis from apt, bound to 127.0.0.1
  --with-nginx              install nginx and a reverse-proxy site (needs --domain); sets TRUST_PROXY=1
  --domain DOMAIN           server name of the nginx site
  --nginx-dir DIR           write the nginx site into DIR only (no apt, no reload)
  --systemd-dir DIR         write the unit into DIR only (no systemctl, no /usr/local/bin link,
                            no service user created)
  --no-systemd              no unit, no system user, no systemctl: a self-contained install
  --no-system-user          do not create the service user (it must exist); the data dir is still
                            given to it

Development
  --skip-build              copy files only: no dependency install, build or prune
  --skip-init               do not run `gatehouse init`
  -h, --help                show this help

Exit status: 0 done, 1 failure, 2 usage error.
EOF
}

die() { printf 'install.sh: error: %s\n' "$*" >&2; exit 1; }
usage_error() { printf 'install.sh: %s\nRun "install.sh --help" for the options.\n' "$*" >&2; exit 2; }
step() { printf '\n==> %s\n' "$*"; }
warn() { printf 'install.sh: warning: %s\n' "$*" >&2; }
DONE=()
did() { DONE+=("$*"); printf '    %s\n' "$*"; }

# ---------------------------------------------------------------------------------------------------
# Options

PREFIX=/opt/gatehouse DATA_DIR=/var/lib/gatehouse SOURCE=$SCRIPT_DIR ENV_FILE='' SERVICE_USER=gatehouse
PORT='' HOST='' PUBLIC_URL='' DATABASE_URL='' REDIS_URL='' SMTP_URL='' MAIL_FROM='' ADMIN_EMAIL='' ADMIN_PASSWORD_FILE=''
WITH_POSTGRES=0 WITH_REDIS=0 WITH_NGINX=0 DOMAIN='' NGINX_DIR='' SYSTEMD_DIR=''
SYSTEMD=1 SYSTEM_USER=1 SKIP_BUILD=0 SKIP_INIT=0 USER_GIVEN=0

while [[ $# -gt 0 ]]; do
  opt=$1 inline=0
  if [[ $opt == --*=* ]]; then
    set -- "${opt%%=*}" "${opt#*=}" "${@:2}"
    opt=$1 inline=1
  fi
  case $opt in
    --prefix | --data-dir | --source | --env-file | --user | --port | --host | --public-url | \
      --database-url | --redis-url | --smtp-url | --mail-from | --admin-email | --admin-password-file | \
      --domain | --nginx-dir | --systemd-dir)
      [[ $# -ge 2 && -n $2 ]] || usage_error "$opt needs a value"
      case $opt in
        --prefix) PREFIX=$2 ;;
        --data-dir) DATA_DIR=$2 ;;
        --source) SOURCE=$2 ;;
        --env-file) ENV_FILE=$2 ;;
        --user) SERVICE_USER=$2 USER_GIVEN=1 ;;
        --port) PORT=$2 ;;
        --host) HOST=$2 ;;
        --public-url) PUBLIC_URL=$2 ;;
        --database-url) DATABASE_URL=$2 ;;
        --redis-url) REDIS_URL=$2 ;;
        --smtp-url) SMTP_URL=$2 ;;
        --mail-from) MAIL_FROM=$2 ;;
        --admin-email) ADMIN_EMAIL=$2 ;;
        --admin-password-file) ADMIN_PASSWORD_FILE=$2 ;;
        --domain) DOMAIN=$2 ;;
        --nginx-dir) NGINX_DIR=$2 ;;
        --systemd-dir) SYSTEMD_DIR=$2 ;;
      esac
      shift 2
      continue
      ;;
  esac
  [[ $inline == 0 ]] || usage_error "$opt takes no value"
  case $opt in
    --with-postgres) WITH_POSTGRES=1 ;;
    --with-redis) WITH_REDIS=1 ;;
    --with-nginx) WITH_NGINX=1 ;;
    --no-systemd) SYSTEMD=0 ;;
    --no-system-user) SYSTEM_USER=0 ;;
    --skip-build) SKIP_BUILD=1 ;;
    --skip-init) SKIP_INIT=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage_error "unknown option: $opt" ;;
  esac
  shift
done

# Paths end up unquoted in the systemd unit, so only plain characters are accepted.
abs_path() {
  local name=$1 value=$2 resolved
  resolved=$(realpath -m -- "$value")
  [[ $resolved =~ ^/[A-Za-z0-9._+/-]*$ ]] || usage_error "$name: use a path of letters, digits and . _ + - / (got \"$value\")"
  printf '%s' "$resolved"
}
# A path strictly inside another (both absolute, normalised).
is_inside() { [[ $1 != "$2" && $1 == "$2"/* ]]; }

PREFIX=$(abs_path --prefix "$PREFIX")
DATA_DIR=$(abs_path --data-dir "$DATA_DIR")
[[ -d $SOURCE ]] || usage_error "--source: no such directory: $SOURCE"
SOURCE=$(cd "$SOURCE" && pwd -P)
[[ -z $NGINX_DIR ]] || NGINX_DIR=$(abs_path --nginx-dir "$NGINX_DIR")
[[ -z $SYSTEMD_DIR ]] || SYSTEMD_DIR=$(abs_path --systemd-dir "$SYSTEMD_DIR")
[[ -z $ENV_FILE ]] || ENV_FILE=$(abs_path --env-file "$ENV_FILE")

# Guard the rm -rf of PREFIX/<dir> and the chown -R of the data dir against a slip of the keyboard.
for guarded in "$PREFIX" "$DATA_DIR"; do
  case $guarded in
    / | /bin | /boot | /dev | /etc | /home | /lib | /lib64 | /opt | /proc | /root | /run | /sbin | /srv | \
      /sys | /tmp | /usr | /usr/local | /var | /var/lib)
      usage_error "refusing to use $guarded as install or data directory" ;;
  esac
done
if is_inside "$PREFIX" "$SOURCE" || is_inside "$SOURCE" "$PREFIX"; then
  usage_error "--prefix and --source must not contain each other (equal is fine: an in-place install)"
fi
[[ $SERVICE_USER =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] || usage_error "--user: not a valid user name: $SERVICE_USER"
if [[ -n $PORT ]]; then
  if ! [[ $PORT =~ ^[0-9]{1,5}$ ]] || ((10#$PORT > 65535)); then usage_error "--port: expected 0-65535, got \"$PORT\""; fi
  PORT=$((10#$PORT))
fi
[[ -z $HOST || $HOST =~ ^[A-Za-z0-9.:_-]+$ ]] || usage_error "--host: not an address: $HOST"
if [[ -n $ADMIN_EMAIL || -n $ADMIN_PASSWORD_FILE ]]; then
  [[ -n $ADMIN_EMAIL && -n $ADMIN_PASSWORD_FILE ]] || usage_error "--admin-email and --admin-password-file go together"
  [[ -r $ADMIN_PASSWORD_FILE && -f $ADMIN_PASSWORD_FILE ]] || usage_error "--admin-password-file: cannot read $ADMIN_PASSWORD_FILE"
  ADMIN_PASSWORD_FILE=$(realpath -- "$ADMIN_PASSWORD_FILE")
fi
((WITH_POSTGRES == 0)) || [[ -z $DATABASE_URL ]] || usage_error "use either --with-postgres or --database-url"
((WITH_REDIS == 0)) || [[ -z $REDIS_URL ]] || usage_error "use either --with-redis or --redis-url"
if ((WITH_NGINX)); then
  [[ -n $DOMAIN ]] || usage_error "--with-nginx needs --domain"
  [[ $PORT != 0 ]] || usage_error "--with-nginx needs a fixed --port (not 0)"
else
  [[ -z $DOMAIN && -z $NGINX_DIR ]] || usage_error "--domain and --nginx-dir need --with-nginx"
fi
if [[ -n $DOMAIN ]]; then
  label='[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?'
  [[ $DOMAIN =~ ^($label\.)*$label$ ]] || usage_error "--domain: not a host name: $DOMAIN"
  [[ -n $PUBLIC_URL ]] || PUBLIC_URL=https://$DOMAIN
fi
((SYSTEMD == 1)) || [[ -z $SYSTEMD_DIR ]] || usage_error "use either --no-systemd or --systemd-dir"
# The configuration options are handed to `gatehouse init`; with --skip-init they would be dropped
# silently (and --with-postgres's generated password lost), so that is refused. --port stays: the
# nginx site uses it.
if ((SKIP_INIT)); then
  ignored=()
  [[ -z $HOST ]] || ignored+=(--host)
  [[ -z $PUBLIC_URL || -n $DOMAIN ]] || ignored+=(--public-url)
  [[ -z $DATABASE_URL ]] || ignored+=(--database-url)
  [[ -z $REDIS_URL ]] || ignored+=(--redis-url)
  [[ -z $SMTP_URL ]] || ignored+=(--smtp-url)
  [[ -z $MAIL_FROM ]] || ignored+=(--mail-from)
  [[ -z $ADMIN_EMAIL ]] || ignored+=(--admin-email)
  ((WITH_POSTGRES == 0)) || ignored+=(--with-postgres)
  ((WITH_REDIS == 0)) || ignored+=(--with-redis)
  ((${#ignored[@]} == 0)) || usage_error "${ignored[*]} configure Gatehouse through gatehouse init, which --skip-init skips; drop one or the other"
fi
# With --no-systemd nothing runs as a service user, so naming one is a mistake worth pointing out.
((SYSTEMD == 1 || USER_GIVEN == 0)) || usage_error "--user names the user of the systemd unit; it has no effect with --no-systemd"
# The unit must not name a user nobody created.
if ((SYSTEMD == 1 && SYSTEM_USER == 0)) && ! id -u "$SERVICE_USER" >/dev/null 2>&1; then
  usage_error "--no-system-user: the unit would run as \"$SERVICE_USER\", which does not exist; create it first, name an existing user with --user, or drop --no-system-user"
fi

# What this run may touch outside PREFIX and DATA_DIR.
HOST_SYSTEMD=0 MANAGE_USER=0 HOST_NGINX=0
((SYSTEMD == 1)) && [[ -z $SYSTEMD_DIR ]] && HOST_SYSTEMD=1
# The user is created only with the unit installed on this host: --systemd-dir writes a unit for
# elsewhere (or later) and creates nothing else.
((HOST_SYSTEMD == 1 && SYSTEM_USER == 1)) && MANAGE_USER=1
((WITH_NGINX == 1)) && [[ -z $NGINX_DIR ]] && HOST_NGINX=1
[[ -n $SYSTEMD_DIR ]] || SYSTEMD_DIR=/etc/systemd/system
[[ -n $NGINX_DIR ]] || NGINX_DIR=/etc/nginx
if [[ -z $ENV_FILE ]]; then
  if ((HOST_SYSTEMD)); then ENV_FILE=/etc/gatehouse/gatehouse.env; else ENV_FILE=$PREFIX/etc/gatehouse.env; fi
fi

if ((EUID != 0)); then
  needs=()
  ((HOST_SYSTEMD)) && needs+=("the systemd unit (or --no-systemd / --systemd-dir)")
  ((MANAGE_USER)) && needs+=("the service user (or --no-system-user)")
  ((HOST_NGINX)) && needs+=("the nginx site (or --nginx-dir)")
  ((WITH_POSTGRES)) && needs+=("--with-postgres")
  ((WITH_REDIS)) && needs+=("--with-redis")
  if ((${#needs[@]})); then
    die "run as root for: $(IFS=,; printf '%s' "${needs[*]}" | sed 's/,/, /g'). For an install without touching the host: --no-systemd --prefix DIR --data-dir DIR"
  fi
fi

# ---------------------------------------------------------------------------------------------------
# Helpers

version_ge() { [[ $(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1) == "$2" ]]; }
systemd_running() { [[ -d /run/systemd/system ]] && command -v systemctl >/dev/null; }
# Whether what this run writes in the data dir goes to the service user: as root, whenever a unit names
# that user and it exists (created here, or given with --no-system-user), so the service can read it.
owns_data() { ((SYSTEMD == 1 && EUID == 0)) && id -u "$SERVICE_USER" >/dev/null 2>&1; }

APT_UPDATED=0
apt_install() {
  command -v apt-get >/dev/null || die "apt-get not found: installing $* needs Debian or Ubuntu (install it yourself, then re-run without the --with-… option)"
  export DEBIAN_FRONTEND=noninteractive
  if ((APT_UPDATED == 0)); then apt-get update -q || die "apt-get update failed"; APT_UPDATED=1; fi
  apt-get install -y -q --no-install-recommends "$@" || die "apt-get install $* failed"
  did "installed from apt: $*"
}

start_service() {
  if systemd_running; then
    systemctl enable --now "$1" >/dev/null 2>&1 || die "systemctl enable --now $1 failed (see: journalctl -u $1)"
  elif command -v service >/dev/null; then
    service "$1" start >/dev/null || die "service $1 start failed"
  else
    die "cannot start $1: neither systemd nor service(8) is available"
  fi
}

restart_service() {
  if systemd_running; then systemctl restart "$1"; else service "$1" restart; fi >/dev/null || die "restarting $1 failed"
}

random_hex() {
  if command -v openssl >/dev/null; then openssl rand -hex 24; else od -An -tx1 -N24 /dev/urandom | tr -d ' \n'; fi
}

# Replaces @NAME@ placeholders; values were validated above, so the template text stays data.
render() {
  local template=$1 text
  text=$(<"$template")
  shift
  while [[ $# -ge 2 ]]; do text=${text//"@$1@"/"$2"}; shift 2; done
  [[ ! $text =~ @[A-Z_]+@ ]] || die "template $template has an unreplaced placeholder: ${BASH_REMATCH[0]}"
  printf '%s\n' "$text"
}

# ---------------------------------------------------------------------------------------------------
# Steps

check_node() {
  step "Checking Node.js (supported: $SUPPORTED_NODE)"
  local node version
  if ! node=$(command -v node); then
    die "Node.js not found. Install Node.js 24 LTS (or 22), then re-run:
    NodeSource:      curl -fsSL https://deb.nodesource.com/setup_24.x | bash - && apt-get install -y nodejs
    Debian 13+:      apt-get install -y nodejs npm   (older Debian/Ubuntu releases ship a Node that is too old)"
  fi
  NODE_BIN=$(readlink -f "$node")
  version=$("$NODE_BIN" -p 'process.versions.node') || die "cannot run $NODE_BIN"
  version_ge "$version" "$MIN_NODE" ||
    die "Node.js $version at $NODE_BIN is too old; Gatehouse needs >= $MIN_NODE and supports $SUPPORTED_NODE.
    NodeSource:      curl -fsSL https://deb.nodesource.com/setup_24.x | bash - && apt-get install -y nodejs"
  [[ ${version%%.*} != 20 ]] ||
    warn "Node.js $version: Node.js 20 reached end of life on 2026-04-30; Gatehouse still runs on it, but supports $SUPPORTED_NODE (gatehouse doctor warns until you upgrade: https://deb.nodesource.com/setup_24.x)"
  command -v npm >/dev/null || die "npm not found next to Node.js $version (Debian: apt-get install -y npm)"
  if ((MANAGE_USER)) && [[ $NODE_BIN == /root/* || $NODE_BIN == /home/* ]]; then
    warn "$NODE_BIN lives in a home directory; the service user may not be able to run it (install Node system-wide)"
  fi
  did "Node.js $version ($NODE_BIN)"
}

install_files() {
  step "Installing Gatehouse into $PREFIX"
  [[ -f $SOURCE/package.json && -d $SOURCE/src ]] || die "$SOURCE is not a Gatehouse source tree (no package.json or src/)"
  mkdir -p "$PREFIX" || die "cannot create $PREFIX"
  if [[ $SOURCE == "$PREFIX" ]]; then
    did "installing in place in $PREFIX"
    return
  fi
  local entry
  for entry in package.json package-lock.json README.md install.sh "$SOURCE"/tsconfig*.json; do
    entry=${entry##*/}
    [[ -f $SOURCE/$entry ]] && cp --preserve=mode,timestamps "$SOURCE/$entry" "$PREFIX/$entry"
  done
  # Whole directories are replaced so files removed upstream (an old migration, say) do not linger.
  for entry in bin entry src modules templates; do
    rm -rf "${PREFIX:?}/$entry"
    [[ -d $SOURCE/$entry ]] && cp -R --preserve=mode,timestamps "$SOURCE/$entry" "$PREFIX/$entry"
  done
  did "copied sources from $SOURCE"
}

install_dependencies() {
  step "Installing dependencies and building"
  if [[ $SOURCE != "$PREFIX" ]]; then
    rm -rf "${PREFIX:?}/node_modules"
    if [[ -d $SOURCE/node_modules ]]; then
      # Reusing the source tree's modules keeps the install offline and skips the sqlite3 compile.
      cp -R --preserve=mode,timestamps,links "$SOURCE/node_modules" "$PREFIX/node_modules"
      did "copied node_modules from $SOURCE"
    fi
  fi
  if [[ ! -d $PREFIX/node_modules ]]; then
    local hint="sqlite3 compiles from source here and needs: apt-get install -y build-essential python3"
    if [[ -f $PREFIX/package-lock.json ]]; then
      (cd "$PREFIX" && npm ci --no-audit --no-fund) || die "npm ci failed in $PREFIX ($hint)"
    else
      (cd "$PREFIX" && npm install --no-audit --no-fund) || die "npm install failed in $PREFIX ($hint)"
    fi
    did "installed npm dependencies"
  fi
  # A stale dist could keep a deleted migration alive, so the build starts from nothing.
  rm -rf "${PREFIX:?}/dist"
  (cd "$PREFIX" && npm run build) || die "build failed (npm run build in $PREFIX); see the errors above"
  did "built $PREFIX/dist"
  (cd "$PREFIX" && npm prune --omit=dev --no-audit --no-fund) || die "npm prune --omit=dev failed in $PREFIX"
  did "removed development dependencies"
}

ensure_user() {
  step "Service user"
  if id -u "$SERVICE_USER" >/dev/null 2>&1; then
    did "user $SERVICE_USER exists"
  else
    useradd --system --user-group --home-dir "$DATA_DIR" --no-create-home --shell /usr/sbin/nologin "$SERVICE_USER" ||
      die "useradd $SERVICE_USER failed"
    did "created system user $SERVICE_USER"
  fi
}

ensure_data_dir() {
  step "Data directory $DATA_DIR"
  if [[ -d $DATA_DIR ]]; then
    did "kept existing $DATA_DIR"
  else
    mkdir -p "$DATA_DIR" || die "cannot create $DATA_DIR"
    did "created $DATA_DIR"
  fi
  chmod 0750 "$DATA_DIR"
  if owns_data; then chown "$SERVICE_USER:" "$DATA_DIR" && did "$DATA_DIR owned by $SERVICE_USER"; fi
  return 0
}

setup_postgres() {
  step "PostgreSQL"
  if ! command -v pg_ctlcluster >/dev/null || ! dpkg -s postgresql >/dev/null 2>&1; then apt_install postgresql; fi
  start_service postgresql
  local psql=(runuser -u postgres -- psql -v ON_ERROR_STOP=1 -qtAX)
  for _ in $(seq 1 30); do (cd / && "${psql[@]}" -c 'SELECT 1' >/dev/null 2>&1) && break; sleep 1; done
  (cd / && "${psql[@]}" -c 'SELECT 1' >/dev/null) || die "PostgreSQL does not answer (as user postgres)"

  local exists password=
  exists=$(cd / && "${psql[@]}" -c "SELECT 1 FROM pg_roles WHERE rolname = '$PG_ROLE'")
  if [[ $exists != 1 ]]; then
    password=$(random_hex)
    # The password goes through stdin, not argv, so other users cannot read it from ps.
    (cd / && "${psql[@]}" <<<"CREATE ROLE $PG_ROLE LOGIN PASSWORD '$password';") || die "creating role $PG_ROLE failed"
    did "created PostgreSQL role $PG_ROLE with a generated password"
  elif [[ -f $DATA_DIR/config.json ]]; then
    did "PostgreSQL role $PG_ROLE exists; its URL is already in $DATA_DIR/config.json"
  else
    # The old password is not recorded anywhere we can read, and no config uses it yet.
    password=$(random_hex)
    (cd / && "${psql[@]}" <<<"ALTER ROLE $PG_ROLE LOGIN PASSWORD '$password';") || die "resetting role $PG_ROLE failed"
    did "PostgreSQL role $PG_ROLE existed without a Gatehouse config here: set a new generated password"
  fi
  (cd / && "${psql[@]}" <<<"SELECT 'CREATE DATABASE $PG_DB OWNER $PG_ROLE' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '$PG_DB')\\gexec") ||
    die "creating database $PG_DB failed"
  did "PostgreSQL database $PG_DB (owner $PG_ROLE)"
  [[ -z $password ]] || DATABASE_URL="postgres://$PG_ROLE:$password@127.0.0.1:5432/$PG_DB"
}

setup_redis() {
  step "Redis"
  dpkg -s redis-server >/dev/null 2>&1 || apt_install redis-server
  local conf=/etc/redis/redis.conf changed=0
  [[ -f $conf ]] || die "$conf not found after installing redis-server"
  # Only loopback: Redis has no password here, so it must not be reachable from the network.
  local binds loopback='^bind 127\.0\.0\.1( -?::1)?[[:space:]]*$'
  binds=$(grep -E '^bind[[:space:]]' "$conf" || true)
  if ! [[ $binds =~ $loopback ]]; then
    sed -i -E '/^bind[[:space:]]/d' "$conf"
    printf '\n# Set by install.sh --with-redis\nbind 127.0.0.1 -::1\n' >>"$conf"
    changed=1
  fi
  if ! grep -Eq '^protected-mode yes' "$conf"; then
    if grep -Eq '^protected-mode ' "$conf"; then sed -i -E 's/^protected-mode .*/protected-mode yes/' "$conf"; else printf 'protected-mode yes\n' >>"$conf"; fi
    changed=1
  fi
  start_service redis-server
  ((changed == 0)) || restart_service redis-server
  did "Redis bound to 127.0.0.1"
  REDIS_URL=redis://127.0.0.1:6379
}

write_env_file() {
  step "Environment file $ENV_FILE"
  mkdir -p "$(dirname "$ENV_FILE")"
  if [[ -f $ENV_FILE ]]; then
    did "kept existing $ENV_FILE"
  else
    install -m 0640 "$PREFIX/templates/config/gatehouse.env.example" "$ENV_FILE"
    did "wrote $ENV_FILE"
  fi
  # The service reads it as its own user (group access, mode 0640).
  if owns_data; then chown "root:$(id -gn "$SERVICE_USER")" "$ENV_FILE"; fi
  if ((WITH_NGINX)); then
    if grep -Eq '^TRUST_PROXY=' "$ENV_FILE"; then
      did "kept TRUST_PROXY as set in $ENV_FILE"
    else
      printf '\n# Set by install.sh --with-nginx: one reverse proxy (nginx) in front.\nTRUST_PROXY=1\n' >>"$ENV_FILE"
      did "set TRUST_PROXY=1 in $ENV_FILE"
    fi
  fi
}

run_init() {
  step "gatehouse init"
  local cli=$PREFIX/bin/gatehouse
  [[ -f $cli ]] || die "$cli is missing: the source tree has no bin/gatehouse"
  # --environment-file: init records it in config.json, so doctor --data-dir reads what serve reads.
  local args=(init --no-prompt --yes --data-dir "$DATA_DIR" --environment-file "$ENV_FILE")
  [[ -z $PORT ]] || args+=(--port "$PORT")
  [[ -z $HOST ]] || args+=(--host "$HOST")
  [[ -z $PUBLIC_URL ]] || args+=(--public-url "$PUBLIC_URL")
  [[ -z $DATABASE_URL ]] || args+=(--database-url "$DATABASE_URL")
  [[ -z $REDIS_URL ]] || args+=(--redis-url "$REDIS_URL")
  [[ -z $SMTP_URL ]] || args+=(--smtp-url "$SMTP_URL")
  [[ -z $MAIL_FROM ]] || args+=(--mail-from "$MAIL_FROM")
  [[ -z $ADMIN_EMAIL ]] || args+=(--admin-email "$ADMIN_EMAIL" --admin-password-file "$ADMIN_PASSWORD_FILE")
  local status=0
  # umask 077: the SQLite file init creates holds password hashes; only the service may read it.
  (umask 077 && cd "$DATA_DIR" && "$NODE_BIN" "$cli" "${args[@]}") || status=$?
  ((status == 0)) || die "gatehouse init failed (exit $status); see its messages above"
  # init ran as root; the service must own what it wrote (config.json, SQLite file).
  if owns_data; then chown -R "$SERVICE_USER:" "$DATA_DIR"; fi
  did "configured $DATA_DIR (gatehouse init)"
}

# The port the nginx site proxies to: the flag, else the one init recorded, else the default.
resolve_port() {
  [[ -z $PORT ]] || { printf '%s' "$PORT"; return; }
  local from_file=
  if [[ -f $DATA_DIR/config.json ]]; then
    from_file=$("$NODE_BIN" -e 'const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")); if (c.PORT !== undefined) process.stdout.write(String(c.PORT))' "$DATA_DIR/config.json" 2>/dev/null) || from_file=
  fi
  printf '%s' "${from_file:-8787}"
}

write_nginx_site() {
  step "nginx site for $DOMAIN"
  local port site
  port=$(resolve_port)
  [[ $port =~ ^[1-9][0-9]*$ ]] || die "cannot proxy to port \"$port\"; pass --port"
  ((HOST_NGINX == 0)) || command -v nginx >/dev/null || apt_install nginx
  if ((HOST_NGINX)) && [[ -d $NGINX_DIR/sites-available ]]; then
    site=$NGINX_DIR/sites-available/gatehouse.conf
  elif ((HOST_NGINX)); then
    site=$NGINX_DIR/conf.d/gatehouse.conf
  else
    site=$NGINX_DIR/gatehouse.conf
  fi
  mkdir -p "$(dirname "$site")"
  local rendered
  rendered=$(render "$PREFIX/templates/nginx/gatehouse.conf" DOMAIN "$DOMAIN" PORT "$port")
  if [[ ! -f $site ]] || [[ $(<"$site") == "$rendered" ]]; then
    printf '%s\n' "$rendered" >"$site"
    did "wrote $site (proxy to 127.0.0.1:$port)"
  else
    printf '%s\n' "$rendered" >"$site.new"
    warn "$site was edited since install.sh wrote it (certbot?); kept it and wrote $site.new — merge by hand"
    did "wrote $site.new (kept the edited $site)"
  fi
  if ((HOST_NGINX)); then
    if [[ $site == */sites-available/* ]]; then
      mkdir -p "$NGINX_DIR/sites-enabled"
      ln -sfn "$site" "$NGINX_DIR/sites-enabled/gatehouse.conf"
    fi
    if ! nginx -t >/dev/null 2>&1; then
      rm -f "$NGINX_DIR/sites-enabled/gatehouse.conf"
      nginx -t || true
      die "nginx rejected the configuration (site disabled again; see above)"
    fi
    start_service nginx
    if systemd_running; then systemctl reload nginx; else nginx -s reload; fi || die "reloading nginx failed"
    did "enabled and reloaded nginx"
  fi
}

# Under a directory a hardening option hides from the service?
under() {
  local p=$1 d
  shift
  for d in "$@"; do [[ $p == "$d" || $p == "$d"/* ]] && return 0; done
  return 1
}

write_unit() {
  step "systemd unit"
  local unit=$SYSTEMD_DIR/$SERVICE.service protect_home=yes private_tmp=true p
  for p in "$DATA_DIR" "$PREFIX" "$NODE_BIN" "$ENV_FILE"; do
    if under "$p" /home /root /run/user; then protect_home=read-only; fi
  done
  if under "$DATA_DIR" /tmp /var/tmp; then
    private_tmp=false
    warn "the data dir $DATA_DIR is under a temporary directory; the unit keeps the real /tmp visible (PrivateTmp=false)"
  fi
  mkdir -p "$SYSTEMD_DIR"
  render "$PREFIX/templates/systemd/gatehouse.service" \
    PREFIX "$PREFIX" DATA_DIR "$DATA_DIR" USER "$SERVICE_USER" NODE "$NODE_BIN" ENV_FILE "$ENV_FILE" \
    PROTECT_HOME "$protect_home" PRIVATE_TMP "$private_tmp" >"$unit.tmp"
  mv "$unit.tmp" "$unit"
  did "wrote $unit"
  ((HOST_SYSTEMD)) || return 0
  ln -sfn "$PREFIX/bin/gatehouse" /usr/local/bin/gatehouse
  did "linked /usr/local/bin/gatehouse"
  if ! systemd_running; then
    warn "systemd is not running here; start Gatehouse yourself: $PREFIX/bin/gatehouse serve --data-dir $DATA_DIR"
    return 0
  fi
  systemctl daemon-reload
  systemctl enable "$SERVICE" >/dev/null 2>&1 || die "systemctl enable $SERVICE failed"
  if ((SKIP_INIT)); then
    did "enabled $SERVICE (not started: init was skipped)"
  elif systemctl is-active --quiet "$SERVICE"; then
    systemctl restart "$SERVICE" || die "systemctl restart $SERVICE failed (see: journalctl -u $SERVICE)"
    did "restarted $SERVICE"
  else
    systemctl start "$SERVICE" || die "systemctl start $SERVICE failed (see: journalctl -u $SERVICE)"
    did "enabled and started $SERVICE"
  fi
}

next_steps() {
  local cli=$PREFIX/bin/gatehouse
  ((HOST_SYSTEMD)) && cli=gatehouse
  local as_user=
  if owns_data; then as_user="runuser -u $SERVICE_USER -- "; fi
  printf '\nGatehouse is installed. Done:\n'
  printf '  - %s\n' "${DONE[@]}"
  printf '\nNext steps:\n'
  ((SKIP_INIT == 0)) || printf '  - configure it:   %s%s init --data-dir %s\n' "$as_user" "$cli" "$DATA_DIR"
  if ((HOST_SYSTEMD)); then
    printf '  - status, logs:   systemctl status %s; journalctl -u %s -f\n' "$SERVICE" "$SERVICE"
  elif ((SYSTEMD)); then
    id -u "$SERVICE_USER" >/dev/null 2>&1 ||
      printf '  - the unit runs as %s, which does not exist: useradd --system --user-group --home-dir %s --shell /usr/sbin/nologin %s && chown -R %s: %s\n' \
        "$SERVICE_USER" "$DATA_DIR" "$SERVICE_USER" "$SERVICE_USER" "$DATA_DIR"
    printf '  - install the unit: cp %s/%s.service /etc/systemd/system/ && systemctl daemon-reload && systemctl enable --now %s\n' "$SYSTEMD_DIR" "$SERVICE" "$SERVICE"
  else
    printf '  - start it:       NODE_ENV=production %s serve --data-dir %s --environment-file %s\n' "$cli" "$DATA_DIR" "$ENV_FILE"
  fi
  if ((SKIP_INIT)); then
    printf '  - check the setup: %s%s doctor --data-dir %s --environment-file %s\n' "$as_user" "$cli" "$DATA_DIR" "$ENV_FILE"
  else
    printf '  - check the setup: %s%s doctor --data-dir %s   (reads %s too, as the service does)\n' "$as_user" "$cli" "$DATA_DIR" "$ENV_FILE"
  fi
  [[ -n $ADMIN_EMAIL ]] || printf '  - first admin:    re-run with --admin-email E --admin-password-file F\n'
  if ((WITH_NGINX)); then
    printf '  - TLS:            apt-get install -y certbot python3-certbot-nginx && certbot --nginx -d %s\n' "$DOMAIN"
    printf '                    (PUBLIC_URL is %s; cookies are Secure, so log in over https)\n' "$PUBLIC_URL"
  fi
  printf '  - settings:       %s overrides %s/config.json; see README.md "Configuration"\n' "$ENV_FILE" "$DATA_DIR"
}

main() {
  check_node
  install_files
  ((SKIP_BUILD)) || install_dependencies
  ((MANAGE_USER == 0)) || ensure_user
  ensure_data_dir
  ((WITH_POSTGRES == 0)) || setup_postgres
  ((WITH_REDIS == 0)) || setup_redis
  write_env_file
  ((SKIP_INIT)) || run_init
  ((WITH_NGINX == 0)) || write_nginx_site
  ((SYSTEMD == 0)) || write_unit
  next_steps
}

main
