#!/bin/sh
# Runs a command and passes iff its exit status is the expected one.
#
#   expect_status.sh EXPECTED_STATUS COMMAND [ARGS...]
set -u
if [ $# -lt 2 ]; then
  echo "usage: $0 EXPECTED_STATUS COMMAND [ARGS...]" >&2
  exit 2
fi
expected=$1
shift
"$@"
status=$?
if [ "$status" -ne "$expected" ]; then
  echo "FAIL: exit status $status, expected $expected: $*"
  exit 1
fi
echo "PASS: exit status $status"
