#!/usr/bin/env bash
# Differential workload test: run one bash script natively and in the sandbox, require the same
# stdout and the same exit status.
#
#   compare.sh [--need-private-tmp] SENTRY_RUN SCRIPT
#
# The native run is `env -i PATH=... HOME=/root LANG=C.UTF-8 [TERM=...] /bin/bash SCRIPT`; the
# sandboxed run is `env -i (the same) SENTRY_RUN -- /bin/bash SCRIPT`, whose guest gets that PATH
# and HOME from its caller (and LANG and TERM of its own).
# Both have stdin from /dev/null and / as working directory, native first. stderr is not
# compared (messages name programs and paths) but is shown on a mismatch.
#
# Exit status: 0 same stdout and status; 1 a difference; 2 a usage or harness error; 77 (CTest
# SKIP_RETURN_CODE) the comparison cannot mean anything here: the native run failed (the host
# lacks what the workload needs -- run tools/setup.sh) or --need-private-tmp could not be met.
# A skip is not turned into a pass by WILL_FAIL, which is why it has its own code.
#
# Private /tmp. Both runs happen in one private mount namespace (`unshare --mount`) with a fresh
# tmpfs on /tmp, when the host lets us create one (root, or an unprivileged user namespace):
#  - bash_basic runs `ls -la /tmp | wc -l`. The sandbox's root is the host's, so its /tmp starts
#    as whatever the host's /tmp holds; on the host, /tmp changes all the time (`ctest -j2` runs
#    other tests that make temp files, other people use the machine), so the count would differ
#    between the two runs by chance. In the namespace, /tmp is empty but for what the native run
#    left there (bash_basic's /tmp/a), and the sandbox starts from exactly that, whether its /tmp
#    is an overlay of the host's or a fresh tmpfs (each gives "total", ".", "..", "a" -- 4 lines).
#    A RESOURCE_LOCK would only serialise the tests that declare it, not the rest of the suite or
#    the other users of the machine; this does not depend on anyone else's behaviour.
#  - Nothing on the host's /tmp is touched (bash_basic would otherwise write /tmp/a), and a
#    script killed by the CTest timeout leaves nothing behind: the tmpfs dies with the namespace.
# Without a namespace the runs use the host's /tmp; with --need-private-tmp (bash_basic) the test
# is skipped instead, since its result would be chance.
#
# Time limits: the native half gets 40 s (each script takes a few seconds), the sandboxed half
# WORKLOADS_TIMEOUT seconds (default 240), then SIGTERM and 5 s later SIGKILL, to the whole
# process group. Together they stay under the CTest TIMEOUT of 300 s, so a hang is reported here
# as exit status 124 with both sides' output, instead of CTest killing only this script.
#
# WORKLOADS_NATIVE_ONLY=1 replaces `SENTRY_RUN --` by nothing: both halves run natively. That
# checks the script and this harness (a script must give the same output twice in a row).
set -u

usage() {
  echo "usage: $0 [--need-private-tmp] SENTRY_RUN SCRIPT" >&2
  exit 2
}

native_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Runs both halves, writing stdout/stderr to fds 3/4 (native) and 5/6 (sandbox) and
# "native N" / "sandbox N" lines to fd 7. Called in the private namespace when there is one.
run_both() {
  local private=$1 sentry_run=$2 script=$3
  if [ "$private" = 1 ]; then
    # The fresh /tmp hides the host's: a script or sentry-run that lives there (a checkout in
    # /tmp) stays reachable through a bind mount of the old /tmp on /mnt, in this namespace only.
    if [[ $script == /tmp/* || $sentry_run == /tmp/* ]]; then
      mount --bind /tmp /mnt || exit 2
      script=/mnt/${script#/tmp/}
      if [[ $sentry_run == /tmp/* ]]; then sentry_run=/mnt/${sentry_run#/tmp/}; fi
    fi
    mount -t tmpfs -o mode=1777,size=1g workloads-tmp /tmp || {
      echo "compare.sh: cannot mount a tmpfs on /tmp in the private namespace" >&2
      exit 2
    }
  fi
  cd / || exit 2
  local env=(PATH="$native_path" HOME=/root LANG=C.UTF-8)
  if [ -n "${TERM+set}" ]; then env+=(TERM="$TERM"); fi
  timeout -k 5 40 env -i "${env[@]}" /bin/bash "$script" \
    </dev/null >&3 2>&4 3>&- 4>&- 5>&- 6>&- 7>&-
  echo "native $?" >&7
  # sentry-run gives the guest its caller's PATH and HOME: the same environment as above.
  local sandbox=(env -i "${env[@]}" "$sentry_run" --)
  if [ "${WORKLOADS_NATIVE_ONLY:-0}" = 1 ]; then sandbox=(env -i "${env[@]}"); fi
  timeout -k 5 "${WORKLOADS_TIMEOUT:-240}" "${sandbox[@]}" /bin/bash "$script" \
    </dev/null >&5 2>&6 3>&- 4>&- 5>&- 6>&- 7>&-
  echo "sandbox $?" >&7
}

# Internal: compare.sh re-runs itself as `--inner PRIVATE SENTRY_RUN SCRIPT` inside unshare.
if [ "${1:-}" = --inner ]; then
  [ $# -eq 4 ] || usage
  run_both "$2" "$3" "$4"
  exit 0
fi

need_private=0
if [ "${1:-}" = --need-private-tmp ]; then
  need_private=1
  shift
fi
[ $# -eq 2 ] || usage
sentry_run=$1
script=$2

if [ "${WORKLOADS_NATIVE_ONLY:-0}" != 1 ] && [ ! -x "$sentry_run" ]; then
  echo "compare.sh: not an executable: $sentry_run" >&2
  exit 2
fi
if [ ! -r "$script" ]; then
  echo "compare.sh: cannot read $script" >&2
  exit 2
fi
# Absolute paths: both halves run from /.
self=$(realpath "$0") || exit 2
script=$(realpath "$script") || exit 2
if [ "${WORKLOADS_NATIVE_ONLY:-0}" != 1 ]; then sentry_run=$(realpath "$sentry_run") || exit 2; fi
name=$(basename "$script" .sh)

# The result files live outside the namespace's /tmp (which hides the host's); the runs reach
# them through fds opened here.
out=$(mktemp -d) || exit 2
trap 'rm -rf "$out"' EXIT

# How to get a private mount namespace, if at all: as root directly, else through a user
# namespace in which we are root.
unshare_cmd=()
if [[ $script == /tmp/* || $sentry_run == /tmp/* ]] && [ ! -d /mnt ]; then
  :  # nowhere to keep the host's /tmp reachable (see run_both)
elif unshare --mount --propagation private true 2>/dev/null; then
  unshare_cmd=(unshare --mount --propagation private)
elif unshare --user --map-root-user --mount --propagation private true 2>/dev/null; then
  unshare_cmd=(unshare --user --map-root-user --mount --propagation private)
fi

{
  if ((${#unshare_cmd[@]})); then
    "${unshare_cmd[@]}" /bin/bash "$self" --inner 1 "$sentry_run" "$script"
  elif [ "$need_private" = 1 ]; then
    echo "SKIP $name: needs a private /tmp (unshare --mount), which this host does not allow"
    exit 77
  else
    echo "NOTE $name: no private mount namespace here; using the host's /tmp" >&2
    run_both 0 "$sentry_run" "$script"
  fi
} 3>"$out/native.out" 4>"$out/native.err" 5>"$out/sandbox.out" 6>"$out/sandbox.err" \
  7>"$out/status"
harness_status=$?

native_status=$(sed -n 's/^native //p' "$out/status")
sandbox_status=$(sed -n 's/^sandbox //p' "$out/status")
if [ "$harness_status" -ne 0 ] || [ -z "$native_status" ] || [ -z "$sandbox_status" ]; then
  echo "compare.sh: the harness failed (status $harness_status) before both runs finished" >&2
  exit 2
fi

# Shows one side's stderr, at most its last 40 lines.
show_stderr() {
  local side=$1
  if [ -s "$out/$side.err" ]; then
    local lines
    lines=$(wc -l <"$out/$side.err")
    if [ "$lines" -gt 40 ]; then
      echo "--- $side stderr (last 40 of $lines lines):"
    else
      echo "--- $side stderr:"
    fi
    tail -n 40 "$out/$side.err"
  fi
}

if [ "$native_status" -ne 0 ]; then
  if [ "$native_status" -eq 124 ]; then native_status="124, timed out after 40 s"; fi
  echo "SKIP $name: the native run failed (exit status $native_status), so the host cannot run"
  echo "this workload (missing packages? see tools/setup.sh); the sandbox was not judged."
  show_stderr native
  exit 77
fi

# On a mismatch: the exit statuses and the sandbox's stderr first (its first error is usually
# the whole story), then the stdout diff, then the native stderr.
same_out=1
cmp -s "$out/native.out" "$out/sandbox.out" || same_out=0
if [ "$same_out" -eq 0 ] || [ "$native_status" -ne "$sandbox_status" ]; then
  timed_out=""
  if [ "$sandbox_status" -eq 124 ]; then
    timed_out=" (timed out: killed after ${WORKLOADS_TIMEOUT:-240} s)"
  fi
  echo "FAIL $name: exit status native $native_status, sandbox $sandbox_status$timed_out;" \
    "stdout $([ "$same_out" -eq 1 ] && echo same || echo differs)"
  show_stderr sandbox
  if [ "$same_out" -eq 0 ]; then
    echo "--- stdout diff (--- native, +++ sandbox; at most 200 lines):"
    diff -u --label native --label sandbox "$out/native.out" "$out/sandbox.out" | head -n 200
  fi
  show_stderr native
  exit 1
fi
echo "PASS $name: $(wc -l <"$out/native.out") lines of stdout, exit status $native_status"
exit 0
