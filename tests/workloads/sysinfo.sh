# Workload: the tools that describe the machine and its processes (procps, coreutils, Python's
# os module) read /proc, /sys and the scheduling syscalls. Only what is deterministic is printed:
# counts that both sides agree on, header lines, the shape of numbers and exit statuses.
set -u
work=$(mktemp -d /tmp/wl.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "nproc: $(nproc)"
echo "getconf: $(getconf _NPROCESSORS_ONLN) $(getconf _NPROCESSORS_CONF)"
free | awk 'NR == 1 { print "free header:", $0 } NR > 1 { print "free row:", $1, NF }'
free -h >/dev/null; echo "free -h: $?"
uptime | sed -E 's/^ *[0-9]+:[0-9]+:[0-9]+ up .*load average: [0-9]+\.[0-9]+, [0-9]+\.[0-9]+, [0-9]+\.[0-9]+$/uptime: shape ok/'
uptime -p >/dev/null; echo "uptime -p: $?"
ps aux >"$work/ps.out"; echo "ps aux: $?"
head -1 "$work/ps.out"
grep -c ' ps aux$' "$work/ps.out"
ps -o pid=,comm= -p $$ | awk '{ print "ps self:", $2 }'
ps -eo nice=,pri=,psr=,policy= -q $$ | awk '{ print "ps sched fields:", NF }'
rm -f "$work/ps.out"
top -bn1 >"$work/top.out"; echo "top -bn1: $?"
sed -n '1s/^top - [0-9:]* up .*load average: .*/top line 1 ok/p; 2s/^Tasks: *[0-9]* total, .*/top tasks ok/p; 3s/^%Cpu(s):.*/top cpu ok/p; 4s/^MiB Mem : .*/top mem ok/p; 5s/^MiB Swap: .*/top swap ok/p' "$work/top.out"
sed -n '7p' "$work/top.out" | awk '{ print "top columns:", $0 }'
rm -f "$work/top.out"
python3 -c 'import os; print(os.getloadavg() is not None, os.cpu_count(), len(os.sched_getaffinity(0)))'
python3 -c 'import os; os.sched_setaffinity(0, {0}); print(os.sched_getaffinity(0)); os.nice(3); print(os.nice(0)); print(os.sched_getscheduler(0) == os.SCHED_OTHER)'
taskset -p $$ | sed 's/^pid [0-9]*/pid N/'
taskset -c 0 sh -c 'nproc; grep Cpus_allowed_list /proc/self/status'
nice -n 5 nice
cat /proc/self/limits | head -1
