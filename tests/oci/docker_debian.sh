# Sourced by docker.sh (its helpers: pass, fail, $work, RUN, CTR): a second image, Debian's
# bash and python3 with their libraries and the Python standard library taken from the host's
# own files (no network, about 30 MB, imported in seconds), and what a real distribution
# userland meets in the Sentry: python3, bash job control on a terminal, `>f 2>&1` inside the
# container, Docker's maskedPaths, readonlyPaths and no-new-privileges against runc's.

# Builds the root file system in $work/debian from the host's files (merged /usr, as Debian 12).
make_debian_rootfs() {
  local root=$work/debian py
  # Debian's own python3 and tools (not whatever PATH finds first, e.g. a pyenv shim).
  py=$(readlink -f /usr/bin/python3)
  local bins=(bash "$py" cat ls id env sleep stat touch grep cut wc tr seq head sed)
  mkdir -p "$root/usr/bin" "$root/usr/lib" "$root/usr/lib64" "$root/etc" "$root/tmp" \
    "$root/root" "$root/proc" "$root/sys" "$root/dev"
  chmod 1777 "$root/tmp"
  for l in bin lib lib64 sbin; do ln -sfn "usr/$l" "$root/$l"; done
  mkdir -p "$root/usr/sbin"
  local files=()
  for b in "${bins[@]}"; do
    [[ $b == /* ]] || b=/usr/bin/$b
    files+=("$(readlink -f "$b")")
  done
  # Every library they load, and the dynamic loader under the name the binaries ask for.
  for f in "${files[@]}"; do
    ldd "$f" 2>/dev/null | awk '/=>/ {print $3} /ld-linux/ {print $1}'
  done | sort -u | while read -r lib; do
    [[ -e $lib ]] || continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  for f in "${files[@]}"; do cp -L "$f" "$root/usr/bin/"; done
  ln -sf bash "$root/usr/bin/sh"
  ln -sf "$(basename "$py")" "$root/usr/bin/python3"
  local stdlib
  stdlib=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
  mkdir -p "$root$stdlib"
  tar -C "$stdlib" -c --exclude=./test --exclude='./config-*' --exclude=./idlelib \
    --exclude=./tkinter --exclude=./lib2to3 --exclude=./ensurepip --exclude=./pydoc_data \
    --exclude=./dist-packages --exclude=./site-packages --exclude=./turtledemo \
    --exclude='*/tests' --exclude='*/test' . | tar -C "$root$stdlib" -x
  printf 'root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/tmp:/bin/bash\n' >"$root/etc/passwd"
  printf 'root:x:0:\nuser:x:1000:\n' >"$root/etc/group"
}

DEB=sentry-debian:latest
t0=$(date +%s)
if [[ ! -x /usr/bin/python3 || ! -x /usr/bin/bash ]]; then
  echo "note: no /usr/bin/python3 or /usr/bin/bash on this host: the Debian image checks are skipped"
elif ! make_debian_rootfs || ! tar -C "$work/debian" -c . | docker import - $DEB >/dev/null; then
  fail "docker import of the Debian image"
else
  echo "note: Debian image ($(du -sm "$work/debian" | cut -f1) MB) built and imported in $(($(date +%s) - t0)) s"
  DRUN=(docker run --rm --network none --runtime=sentry)
  out=$("${DRUN[@]}" $DEB python3 -c '
import json, os, sys, subprocess
r = subprocess.run(["bash", "-c", "echo from-bash $$"], capture_output=True, text=True)
print(json.dumps({"pid": os.getpid(), "v": list(sys.version_info[:2]), "sub": r.stdout.split()[0]}))' 2>&1)
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert d["pid"]==1 and d["sub"]=="from-bash", d' \
    "$out" 2>/dev/null && pass "Debian image: python3 (json, subprocess running bash) as PID 1: $out" ||
    fail "python3: $out"
  out=$("${DRUN[@]}" $DEB bash -c 'a=(x y z); declare -A m=([k]=v); echo ${#a[@]} ${m[k]} $((6*7)) $BASH_VERSION')
  [[ $out == "3 v 42 "5.* ]] && pass "Debian image: bash arrays, arithmetic ($out)" || fail "bash: $out"
  # `>f 2>&1` inside the container: one open file, one offset, nothing lost, in order.
  out=$("${DRUN[@]}" $DEB bash -c 'for i in 1 2 3; do echo out$i; echo err$i >&2; done >/tmp/f 2>&1
python3 -c "import sys
for i in range(3): print(\"py-out\", i, flush=True); print(\"py-err\", i, file=sys.stderr, flush=True)" >>/tmp/f 2>&1
tr "\n" " " </tmp/f')
  want="out1 err1 out2 err2 out3 err3 py-out 0 py-err 0 py-out 1 py-err 1 py-out 2 py-err 2 "
  [[ $out == "$want" ]] && pass "cmd >f 2>&1 inside: every line, in order" || fail ">f 2>&1: '$out'"
  # Job control on a terminal: a background job gets its own process group; kill %1 ends it.
  out=$(timeout 60 script -qec "docker run --rm -t --network none --runtime=sentry $DEB \
    bash -c 'set -m; sleep 30 & pg=\$(cut -d\" \" -f5 /proc/\$!/stat); [ \"\$pg\" = \"\$!\" ] && echo own-pgrp; jobs; kill %1; wait %1; echo rc=\$?'" \
    /dev/null </dev/null 2>&1 | tr -d '\r')
  [[ $out == *own-pgrp*"[1]+"*"Running"*"sleep 30"*"rc=143"* ]] &&
    pass "bash job control under -t: own process group, jobs, kill %1 (rc=143)" || fail "job control: $out"
  # Docker's maskedPaths, readonlyPaths and no-new-privileges, against runc in the same daemon.
  probe='cat /proc/kcore /proc/keys /proc/timer_list 2>/dev/null | wc -c
ls -A /sys/firmware 2>/dev/null | wc -l
(echo x >/proc/sys/kernel/hostname) 2>&1 | sed "s/.*: //"
grep NoNewPrivs /proc/self/status | tr -d "\t"'
  for opt in "" "--security-opt=no-new-privileges"; do
    s=$(docker run --rm --network none --runtime=sentry $opt $DEB bash -c "$probe" 2>&1)
    r=$(docker run --rm --network none $opt $DEB bash -c "$probe" 2>&1)
    nnp=$([[ -n $opt ]] && echo 1 || echo 0)
    [[ $s == "$r" && $s == *"Read-only file system"*"NoNewPrivs:$nnp" ]] &&
      pass "Docker's masked and read-only paths, NoNewPrivs $nnp: as under runc (${opt:-default})" ||
      fail "paths ${opt:-default}: sentry '$s' runc '$r'"
  done
  # Under containerd alone too.
  if docker save $DEB | "${CTR[@]}" images import --snapshotter native - >/dev/null 2>&1; then
    out=$("${CTR[@]}" run --rm --snapshotter native --runc-binary "$SENTRY" \
      docker.io/library/$DEB ctrdeb python3 -c 'import os; print("py", os.getpid()); raise SystemExit(5)' 2>&1)
    rc=$?
    [[ $rc == 5 && $out == "py 1" ]] && pass "ctr run of the Debian image: python3, exit 5" ||
      fail "ctr debian: rc=$rc $out"
  else
    echo "note: ctr import of the Debian image failed; not run under ctr"
  fi
fi
