#!/bin/sh
# strace and gdb inside the sandbox: guest ptrace (issue 9) end to end.
#
#   ptrace_tools.sh SENTRY_RUN PLATFORM SEGV_PROGRAM
#
# 1. `strace -f sh -c 'echo hi; /bin/true'`: the shell's output, its execve, the write of
#    "hi", the forked child's execve of /bin/true under its own pid, both exits.
# 2. `strace ls /`: a dynamically linked program's openat and getdents64, then its exit.
# 3. `gdb -batch -ex run -ex bt SEGV_PROGRAM`: the SIGSEGV stops the program and the
#    backtrace names crash(p=0x0) called from main(), with the source line.
# 4. gdb stops at a breakpoint in crash(), single-steps twice (stepi), continues to SIGSEGV.
# Skipped (77) if strace or gdb is not installed.
set -u
if [ $# -ne 3 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM SEGV_PROGRAM" >&2
  exit 2
fi
sentry_run=$1
platform=$2
prog=$3
for tool in strace gdb; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed (tools/setup.sh installs it)"
    exit 77
  fi
done
out=$(mktemp) || exit 2
stdout=$(mktemp) || exit 2
trap 'rm -f "$out" "$stdout"' EXIT
fail=0

# expect PATTERN WHAT [FILE]: the last run's stderr (or FILE) must match the extended regex.
expect() {
  if ! grep -Eq -- "$1" "${3:-$out}"; then
    echo "FAIL ($platform): $2: no line matches /$1/"
    fail=1
  fi
}

run() {
  timeout 120 "$sentry_run" --platform="$platform" -- "$@" >"$stdout" 2>"$out"
  status=$?
  if [ "$status" -ne 0 ]; then
    echo "FAIL ($platform): '$*' exited with $status"
    fail=1
  fi
}

run strace -f sh -c 'echo hi; /bin/true'
expect '^hi$' "the traced shell's output" "$stdout"
expect '^execve\("/(usr/)?bin/sh", \["sh", "-c", ' "the shell's execve"
expect 'write\(1, "hi\\n", 3\) += 3$' "the shell's write"
expect '^\[pid +[0-9]+\] execve\("/bin/true", \["/bin/true"\]' "the child's execve, by pid"
expect '^\[pid +[0-9]+\] \+\+\+ exited with 0 \+\+\+$' "the child's exit"
expect '^\+\+\+ exited with 0 \+\+\+$' "the shell's exit"
if [ "$fail" -ne 0 ]; then cat "$out"; fi

run strace ls /
expect 'openat\(AT_FDCWD, "/", O_RDONLY\|O_NONBLOCK\|O_CLOEXEC\|O_DIRECTORY\) = [0-9]+$' "ls opening /"
expect '^getdents64\([0-9]+, ' "ls reading /"
expect '^\+\+\+ exited with 0 \+\+\+$' "ls's exit"

run gdb -nx -batch -ex run -ex bt "$prog"
cat "$stdout" >>"$out"
expect '^about to crash$' "the program's output"
expect '^Program received signal SIGSEGV, Segmentation fault\.$' "the SIGSEGV stop"
expect '^#0 .*crash \(p=0x0\) at .*ptrace_segv\.c:[0-9]+$' "frame 0"
expect '^#1 .* main \(\) at .*ptrace_segv\.c:[0-9]+$' "frame 1"
if [ "$fail" -ne 0 ]; then cat "$out"; exit 1; fi

# A breakpoint (a forced write into read-only text) and two single steps.
run gdb -nx -batch -ex 'break crash' -ex run -ex stepi -ex stepi -ex 'p $pc' -ex continue "$prog"
cat "$stdout" >>"$out"
expect '^Breakpoint 1, crash \(p=0x0\) at .*ptrace_segv\.c:[0-9]+$' "the breakpoint"
expect '^\$1 = .* <crash\+[0-9]+>$' "the pc after stepi"
expect '^Program (received|terminated with) signal SIGSEGV' "the SIGSEGV after continue"
if [ "$fail" -ne 0 ]; then cat "$out"; exit 1; fi
echo "PASS ptrace_tools ($platform)"
