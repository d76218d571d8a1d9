# Shared by the test scripts that report one "ok: ..." or "FAIL: ..." line per check and exit
# with $fail (tests/policy/*.sh, tests/escape/bombs.sh, kill9.sh). Source it, then:
#   check DESCRIPTION COMMAND...   runs COMMAND; a failure prints FAIL and sets fail=1
#   build_processes                how many host processes run this build's binaries (their
#                                  exe is under $bindir, which the script sets)
fail=0
check() {
  local what=$1
  shift
  if "$@"; then
    echo "ok: $what"
  else
    echo "FAIL: $what"
    fail=1
  fi
}
build_processes() {
  local n=0 exe
  for exe in /proc/[0-9]*/exe; do
    case "$(readlink "$exe" 2>/dev/null)" in "$bindir"/*) n=$((n + 1)) ;; esac
  done
  echo "$n"
}
