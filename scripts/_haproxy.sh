# Sourced by the smokes that run HAProxy in front of replicas: make sure Debian's haproxy exists
# (installed with apt-get when run as root), else say how to get it and exit 2. $1: the smoke's name.
if ! command -v haproxy >/dev/null && [ ! -x /usr/sbin/haproxy ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "Installing Debian's haproxy ..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy) >/dev/null
  else
    echo "$1 needs haproxy: apt-get install haproxy (or your system's package)." >&2
    exit 2
  fi
fi
