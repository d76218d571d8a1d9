# Workload: coreutils timeout, which arms a POSIX timer (timer_create, else alarm) and kills its
# command when it expires: 124 after the default SIGTERM, 128+9 with -s KILL, the command's own
# status when it finishes first. Elapsed times are printed only as "about right or not".
set -u
ms() { echo $(( $(date +%s%N) / 1000000 )); }

t0=$(ms)
timeout 1 sleep 5
echo "timeout 1 sleep 5: $?"
t=$(( $(ms) - t0 ))
if [ "$t" -ge 900 ] && [ "$t" -lt 3000 ]; then echo "took about 1 s"; else echo "took $t ms"; fi

t0=$(ms)
timeout -s KILL 1 sleep 5
echo "timeout -s KILL 1 sleep 5: $?"
t=$(( $(ms) - t0 ))
if [ "$t" -ge 900 ] && [ "$t" -lt 3000 ]; then echo "took about 1 s"; else echo "took $t ms"; fi

timeout 5 sleep 0.1
echo "finished first: $?"
timeout 5 sh -c 'exit 3'
echo "own status: $?"
timeout --preserve-status 0.2 sleep 5
echo "--preserve-status: $?"
# The command ignores SIGTERM; -k sends SIGKILL a second later.
timeout -k 0.5 0.2 sh -c 'trap "" TERM; sleep 5'
echo "-k after an ignored TERM: $?"
