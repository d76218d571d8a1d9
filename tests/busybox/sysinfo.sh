# Busybox's procps applets read /proc, /sys and sysinfo(2): counts both sides agree on,
# header lines and exit statuses (never times, pids or memory figures).
echo "nproc: $($BB nproc)"
$BB free | $BB awk 'NR == 1 { print "free header:", $1, $2, $3 } NR > 1 { print "free row:", $1 }'
echo "free: $?"
$BB uptime | $BB sed -E 's/^ *[0-9:]+ +up .*load average: [0-9.]+, [0-9.]+, [0-9.]+$/uptime shape ok/'
$BB ps >/dev/null; echo "ps: $?"
$BB ps | $BB head -1 | $BB awk '{ print "ps header:", $1, $2 }'
$BB top -bn1 >/dev/null; echo "top -bn1: $?"
$BB top -bn1 | $BB head -2 | $BB sed -E 's/^Mem: .*/top mem line/; s/^CPU: .*/top cpu line/'
