#!/bin/sh
# Host-side confinement, checked from the host while a guest runs.
#
#   confinement.sh SENTRY_RUN SENTRY PLATFORM USER
#
# USER is root or nobody (tests/guest/unpriv.sh: exits 77 if sentry-run cannot run as
# nobody at all). Runs `SENTRY_RUN --platform=PLATFORM -- sleep 8` as USER and, while it runs,
# checks in /proc: the Sentry (sentry-run), the gofer (its child sentry-gofer) and every stub
# (the descendants named sentry-stub) are under seccomp (Seccomp: 2) with NoNewPrivs; every
# stub has no capability (CapEff, CapPrm, CapInh, CapAmb 0, and as root an empty bounding
# set too), an empty environment, and no fd but its fd channel (fd 0, a socket) and the file
# last lent for a mapping (fd 1, a regular file). The Sentry (sentry-run's child of the same
# name) has no capability but, with direct file access (the default), the two the gofer reads
# and opens with (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH: CapEff and CapPrm 0000000000000006;
# changes stay the gofer's, gofer/lend.cc; no bounding, inheritable or ambient one), and none
# at all with --file-access=gofer; an empty
# read-only tmpfs as its root, and with the gofer and
# every stub user, mount, PID, IPC, UTS and network namespaces other than the host's (the
# gofer keeps some capabilities, in a user namespace not the host's; with --net=host the
# network namespace is the host's). kill -9 of the Sentry leaves no process of its PID
# namespace and no host mount behind, and sentry-run exits 137. Then the
# same run with --unsafe-no-confinement must show the Sentry with no filter (so the first
# check can fail) and say so on stderr. Also checks `SENTRY debug syscalls-allowed`.
# Exits 0 iff everything held.
set -u

if [ $# -ne 4 ]; then
  echo "usage: $0 SENTRY_RUN SENTRY PLATFORM root|nobody" >&2
  exit 2
fi
platform=$3
. "$(dirname "$0")/../guest/unpriv.sh"
as_user "$4" "$1"
sentry=$2
trap 'rm -rf "$run_base"' EXIT
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

field() {  # field PID NAME: the value of NAME: in /proc/PID/status
  sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status" 2>/dev/null
}

# The pids of the processes below $1, one a line. One pass over /proc: pid (comm) state
# ppid ..., where comm may hold spaces, so the fields are counted after the last ')'.
descendants() {
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v root="$1" '
    {
      pid = $1
      rest = $0
      sub(/.*\) /, "", rest)
      split(rest, f, " ")
      parent[pid] = f[2]
    }
    END {
      n = 1; queue[1] = root
      for (i = 1; i <= n; i++)
        for (p in parent) if (parent[p] == queue[i]) { queue[++n] = p; print p }
    }'
}

comm() { cat "/proc/$1/comm" 2>/dev/null; }

# --- the allowlist is printed, with a reason per call and a count that matches -------------
list=$("$sentry" debug syscalls-allowed) || fail "sentry debug syscalls-allowed failed"
summary=$(echo "$list" | tail -n 1)
count=$(echo "$summary" | sed -n 's/^\([0-9][0-9]*\) host system calls in the default.*/\1/p')
extra=$(echo "$summary" | sed -n 's/.*calls in the default configuration, \([0-9][0-9]*\) more.*/\1/p')
oci=$(echo "$summary" | sed -n 's/.*, \([0-9][0-9]*\) more in an OCI container.*/\1/p')
lines=$(echo "$list" | sed '$d' | wc -l)
if [ -z "$count" ] || [ -z "$extra" ] || [ -z "$oci" ] || [ $((count + extra + oci)) -ne "$lines" ]; then
  fail "syscalls-allowed: summary \"$summary\" does not match its $lines entries"
fi
for call in ptrace process_vm_readv futex; do
  echo "$list" | grep -q "^$call " || fail "syscalls-allowed does not list $call"
done
echo "allowlist: $count calls by default, $extra more with --net=host, $oci more in an OCI container"

# --- a confined run -------------------------------------------------------------------------
# Starts the guest in the background; sets $sentry_pid. $1: extra sentry-run flags.
start_guest() {
  $run "$sentry_run" --platform="$platform" --tty=never $1 -- /bin/sleep 8 \
    </dev/null >"$run_base/out" 2>"$run_base/err" &
  bg_pid=$!
  sentry_pid=$bg_pid
  # Ready once a guest stub exists (the factory and the first address space's stub).
  for _ in $(seq 100); do
    n=0
    for p in $(descendants "$bg_pid"); do
      [ "$(comm "$p")" = sentry-stub ] && n=$((n + 1))
    done
    [ "$n" -ge 2 ] && break
    sleep 0.05
  done
  # The Sentry is the innermost sentry-run: $! may be a shell or setpriv on the way.
  for p in $bg_pid $(descendants "$bg_pid"); do
    [ "$(comm "$p")" = sentry-run ] && sentry_pid=$p
  done
  [ "$n" -ge 2 ] && return 0
  fail "no guest stub appeared within 5 s"
  cat "$run_base/err"
}

check_stub() {
  stub=$1
  [ "$(field "$stub" Seccomp)" = 2 ] || fail "stub $stub: Seccomp $(field "$stub" Seccomp), want 2"
  [ "$(field "$stub" NoNewPrivs)" = 1 ] || fail "stub $stub: NoNewPrivs is not set"
  for cap in CapEff CapPrm CapInh CapAmb; do
    v=$(field "$stub" $cap)
    [ "$v" = 0000000000000000 ] || fail "stub $stub: $cap $v, want 0000000000000000"
  done
  if [ "$run_uid" = 0 ]; then
    v=$(field "$stub" CapBnd)
    [ "$v" = 0000000000000000 ] || fail "stub $stub: CapBnd $v, want 0000000000000000"
  fi
  [ -s "/proc/$stub/environ" ] && fail "stub $stub: its environment is not empty"
  # fd 0 is the fd channel (a socket). The platform may also keep the file it last lent
  # for a mapping (StubInjector::lent_file: the guest's program or a library), a regular
  # file the guest mapped anyway. Nothing else.
  for fd in $(ls "/proc/$stub/fd" 2>/dev/null); do
    target=$(readlink "/proc/$stub/fd/$fd")
    if [ "$fd" = 0 ]; then
      [ "${target#socket:}" != "$target" ] || fail "stub $stub: fd 0 -> $target, not a socket"
    elif [ "$fd" = 1 ] && [ -f "/proc/$stub/fd/$fd" ]; then
      :
    else
      fail "stub $stub: fd $fd -> $target (only the fd channel and a lent file are allowed)"
    fi
  done
}

# check_ns PID WHO [NET]: PID's user, mount, PID, IPC, UTS and (unless NET is "host") network
# namespaces all differ from the host's (this script's). WHO names it in failures.
check_ns() {
  for ns in user mnt pid ipc uts net; do
    [ "$ns" = net ] && [ "${3:-}" = host ] && continue
    [ "$(readlink "/proc/$1/ns/$ns")" != "$(readlink "/proc/self/ns/$ns")" ] ||
      fail "$2 ($1) is in the host's $ns namespace"
  done
}

# The Sentry's process model (runtime-shim/namespaces.h): no capability in any namespace but
# the file ones of direct file access ($2: the CapEff and CapPrm wanted), its own namespaces,
# and an empty read-only tmpfs as its root.
direct_caps=0000000000000006
check_sentry() {
  [ "$(field "$sentry_pid" Seccomp)" = 2 ] ||
    fail "the Sentry: Seccomp $(field "$sentry_pid" Seccomp), want 2"
  for cap in CapEff CapPrm CapInh CapAmb CapBnd; do
    v=$(field "$sentry_pid" $cap)
    want=0000000000000000
    case $cap in CapEff | CapPrm) want=${2:-$direct_caps} ;; esac
    [ "$v" = "$want" ] || fail "the Sentry: $cap $v, want $want"
  done
  check_ns "$sentry_pid" "the Sentry" "${1:-}"
  [ "$(stat -f -c %T "/proc/$sentry_pid/root/")" = tmpfs ] ||
    fail "the Sentry's root is $(stat -f -c %T "/proc/$sentry_pid/root/"), not a tmpfs"
  [ -z "$(ls -A "/proc/$sentry_pid/root/")" ] ||
    fail "the Sentry's root is not empty: $(ls -A "/proc/$sentry_pid/root/" | head -n 5)"
  # Its mount table is that one read-only mount: no host mount left below it.
  mi=$(cat "/proc/$sentry_pid/mountinfo")
  [ "$(echo "$mi" | wc -l)" = 1 ] && echo "$mi" | awk '$5 == "/" && $6 ~ /^ro(,|$)/ { ok = 1 } END { exit !ok }' ||
    fail "the Sentry's mounts are not one read-only root: $(echo "$mi" | head -n 3)"
}

start_guest ""
check_sentry
[ "$(field "$sentry_pid" NoNewPrivs)" = 1 ] || fail "the Sentry: NoNewPrivs is not set"
# Non-dumpable: the kernel gives its /proc files to root (visible only when USER is not root).
if [ "$run_uid" != 0 ] && [ "$(stat -c %u "/proc/$sentry_pid/environ")" != 0 ]; then
  fail "the Sentry is dumpable (its /proc/PID/environ belongs to uid $run_uid)"
fi
gofers=0
stubs=0
for p in $(descendants "$sentry_pid"); do
  case $(comm "$p") in
    sentry-gofer)
      gofers=$((gofers + 1))
      [ "$(field "$p" Seccomp)" = 2 ] || fail "the gofer: Seccomp $(field "$p" Seccomp), want 2"
      check_ns "$p" "the gofer"
      # It keeps the capabilities that serve files, but only in a user namespace not the
      # host's (check_ns): CapEff 0 is not asked of it.
      [ "$(readlink "/proc/$p/ns/mnt")" != "$(readlink "/proc/$sentry_pid/ns/mnt")" ] ||
        fail "the gofer shares the Sentry's mount namespace"
      ;;
    sentry-stub)
      stubs=$((stubs + 1))
      check_stub "$p"
      check_ns "$p" "stub"
      ;;
  esac
done
[ "$gofers" = 1 ] || fail "found $gofers gofers, want 1"
echo "checked the Sentry, $gofers gofer and $stubs stubs"
wait "$bg_pid"
status=$?
[ "$status" = 0 ] || { fail "the guest exited $status"; cat "$run_base/err"; }

# --- kill -9 of the Sentry leaves nothing behind ------------------------------------------
# Every process of the sandbox is in the Sentry's PID namespace (the gofer and the stubs too):
# none may remain once it is gone; nothing was ever mounted in the host's mount namespace; and
# sentry-run (the parent) reports the kill.
# The mounts the Sentry and the gofer make are named (sentry-root, gofer-root); other tests
# running at the same time (a dockerd) may change the host's table, so only those are looked
# for among the lines that appear.
mounts_before=$(sort /proc/self/mountinfo)
start_guest ""
pidns=$(readlink "/proc/$sentry_pid/ns/pid")
in_ns=$(for p in /proc/[0-9]*; do [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$pidns" ] && echo "$p"; done | wc -l)
[ "$in_ns" -ge 3 ] || fail "only $in_ns processes in the Sentry's PID namespace (want the Sentry, the gofer, stubs)"
kill -KILL "$sentry_pid"
wait "$bg_pid"
status=$?
[ "$status" = 137 ] || fail "sentry-run exited $status after kill -9 of the Sentry, want 137"
left=
for _ in $(seq 50); do
  left=$(for p in /proc/[0-9]*; do [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$pidns" ] && echo "${p#/proc/}"; done)
  [ -z "$left" ] && break
  sleep 0.1
done
[ -z "$left" ] || fail "kill -9 of the Sentry left processes behind: $left"
echo "$mounts_before" >"$run_base/mounts_before"
new_mounts=$(sort /proc/self/mountinfo | comm -13 "$run_base/mounts_before" - |
  grep -E 'sentry-root|gofer-root' || true)
[ -z "$new_mounts" ] || fail "the sandbox's mounts appeared in the host's mount table: $new_mounts"
echo "kill -9 of the Sentry: $in_ns processes in its PID namespace before, none after"

# --- --net=host: the host's network namespace, every other one the Sentry's own -----------
start_guest --net=host
check_sentry host
[ "$(readlink "/proc/$sentry_pid/ns/net")" = "$(readlink /proc/self/ns/net)" ] ||
  fail "--net=host: the Sentry is not in the host's network namespace"
wait "$bg_pid"

# --- --file-access=gofer: the Sentry holds no capability at all ----------------------------
start_guest --file-access=gofer
check_sentry "" 0000000000000000
wait "$bg_pid"

# --- the same with --unsafe-no-confinement: the Sentry check above can fail ---------------
start_guest --unsafe-no-confinement
[ "$(field "$sentry_pid" Seccomp)" = 0 ] ||
  fail "--unsafe-no-confinement: the Sentry still has Seccomp $(field "$sentry_pid" Seccomp)"
if [ "$run_uid" != 0 ] && [ "$(stat -c %u "/proc/$sentry_pid/environ")" != "$run_uid" ]; then
  fail "--unsafe-no-confinement: the Sentry is still non-dumpable"
fi
wait "$bg_pid"
grep -q 'WARNING: --unsafe-no-confinement' "$run_base/err" ||
  fail "--unsafe-no-confinement was not announced on stderr"

if [ "$failures" -ne 0 ]; then
  echo "$failures checks failed"
  exit 1
fi
echo "PASS"
