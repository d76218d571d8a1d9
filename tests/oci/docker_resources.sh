# Sourced by docker.sh (its helpers: RUN, IMG, pass, fail): --read-only, and the container's
# host cgroup: --memory, --pids-limit, docker stats, docker update.

out=$("${RUN[@]}" --read-only --tmpfs /scratch $IMG \
  sh -c 'touch /x 2>&1; touch /tmp/x 2>&1; echo y >/scratch/f && echo scratch-ok')
[[ $(grep -c "Read-only file system" <<<"$out") == 2 && $out == *scratch-ok ]] &&
  pass "--read-only: EROFS on the root and /tmp, --tmpfs writable" || fail "--read-only: $out"

if [[ ! -w /sys/fs/cgroup/memory && ! -w /sys/fs/cgroup/cgroup.procs ]]; then
  echo "note: no writable cgroup hierarchy; the --memory, --pids-limit, stats, update checks were not run"
  return 0
fi
# A memory hog as the container's init that touches what it maps: 63 MiB fit the Sentry's
# accounting (64 MiB), but with the sandbox's own memory they pass the host group's limit,
# whose OOM kill ends the container as under runc. (One that maps more than it touches, such
# as tail /dev/zero, gets ENOMEM from the Sentry first: tests/oci/cli_resources.sh.)
name=hog$$
docker run --network none --runtime=sentry --name $name --memory 64m $IMG \
  dd if=/dev/zero of=/dev/null bs=63M count=1 iflag=fullblock >/dev/null 2>"$work/err"
rc=$?
oom=$(docker inspect -f '{{.State.OOMKilled}}' $name)
docker rm -f $name >/dev/null 2>&1
[[ $rc == 137 ]] && pass "--memory 64m: a memory hog ends with 137 (OOMKilled=$oom)" ||
  fail "--memory 64m hog: rc=$rc OOMKilled=$oom $(cat "$work/err")"
[[ $oom == true ]] && pass "--memory 64m: docker inspect shows OOMKilled" ||
  echo "note: docker inspect shows OOMKilled=$oom"
out=$("${RUN[@]}" --pids-limit 50 $IMG \
  sh -c 'i=0; while [ $i -lt 80 ]; do sleep 3 & i=$((i+1)); done 2>&1; echo spawned' 2>&1)
rc=$?
[[ $rc == 2 && $out == *"can't fork: Resource temporarily unavailable"* ]] &&
  pass "--pids-limit 50: 80 forks get EAGAIN inside (busybox sh's exit 2)" ||
  fail "--pids-limit: rc=$rc $(tail -3 <<<"$out")"
out=$("${RUN[@]}" $IMG echo still-fine)
[[ $out == still-fine ]] && pass "the next container runs after the fork bomb" || fail "after: $out"
# The container reads its own limits where programs look for them, as under runc.
limits_of() {
  docker run --rm --network none --runtime="$1" --memory 64m --pids-limit 70 $IMG sh -c \
    'cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max 2>&1 ||
     cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max' 2>&1
}
s_lim=$(limits_of sentry)
r_lim=$(limits_of runc)
[[ $s_lim == "$r_lim" && $s_lim == 67108864* ]] &&
  pass "--memory 64m --pids-limit 70: the guest reads them in /sys/fs/cgroup as under runc ($(echo $s_lim))" ||
  fail "cgroup view: sentry '$s_lim' runc '$r_lim'"
id=$(docker run -d --network none --runtime=sentry --memory 64m $IMG sleep 60)
usage=$(docker stats --no-stream --format '{{.MemUsage}}' "$id")
[[ $usage =~ ^[0-9.]+[KMG]iB\ /\ 64MiB$ && $usage != 0B* ]] &&
  pass "docker stats --no-stream: $usage" || fail "docker stats: '$usage'"
docker update --memory 128m --memory-swap 256m "$id" >/dev/null 2>"$work/err"
usage=$(docker stats --no-stream --format '{{.MemUsage}}' "$id")
[[ $usage == *" / 128MiB" ]] && pass "docker update --memory 128m: live ($usage)" ||
  fail "docker update: '$usage' $(cat "$work/err")"
docker rm -f "$id" >/dev/null
