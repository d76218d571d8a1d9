# sleep: timers, and signals interrupting a sleep.
$BB sleep 0.2
echo "sleep status: $?"
$BB sleep 0
echo "sleep 0 status: $?"
t0=$($BB date +%s)
$BB sleep 1.1
t1=$($BB date +%s)
if [ $((t1 - t0)) -ge 1 ]; then echo "slept at least 1s"; else echo "too short: $t0 $t1"; fi
# timeout kills the sleeper with SIGTERM: 128+15.
$BB timeout 1 $BB sleep 10
echo "timeout status: $?"
$BB timeout 5 $BB sleep 0.1
echo "timeout not reached: $?"
$BB usleep 100000
echo "usleep status: $?"
